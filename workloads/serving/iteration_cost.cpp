#include "workloads/serving/iteration_cost.h"

#include "models/llm/dense_layer.h"
#include "models/llm/lora.h"
#include "models/llm/moe_layer.h"
#include "sim/error.h"
#include "workloads/serving/two_batch_overlap.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fathom::workloads::serving {

using models::GroupKind;

int64_t IterationShape::tokens() const {
    int64_t t = decodes * verify;
    for (const auto& p : prefills) t += p.tokens;
    return t;
}

double IterationCost::total() const {
    double t = 0;
    for (double s : stage_s) t += s;
    return t + p2p_s * static_cast<double>(stage_s.size() - 1);
}

int64_t bucket_tokens(int64_t n) {
    if (n <= 256) return n;
    const int e = 63 - __builtin_clzll(static_cast<unsigned long long>(n));  // floor(log2 n)
    const int64_t step = int64_t{1} << (e - 7);
    return (n + step / 2) / step * step;
}

namespace {

// Two-batch overlap's split of an iteration's batch into two halves of about equal tokens, at
// sequence boundaries (SGLang splits the batch where the token sums balance); a single sequence's
// prefill chunk is cut in two, the second half attending to the first as context.
std::pair<models::TokenBatch, models::TokenBatch> split_batch(const models::TokenBatch& b) {
    std::pair<models::TokenBatch, models::TokenBatch> h;
    int64_t ta = 0, tb = 0;
    auto put = [&](const models::SequenceSlice& x) {
        const bool first = ta <= tb;
        (first ? h.first : h.second).slices.push_back(x);
        (first ? ta : tb) += x.count * x.q_len;
    };
    if (b.slices.size() == 1 && b.slices[0].count == 1 && b.slices[0].q_len > 1) {
        const models::SequenceSlice x = b.slices[0];
        const int64_t first = x.q_len / 2;
        h.first.slices.push_back({1, first, x.kv_len - (x.q_len - first)});
        h.second.slices.push_back({1, x.q_len - first, x.kv_len});
        return h;
    }
    for (const models::SequenceSlice& x : b.slices) {
        if (x.count > 1) {
            const int64_t a = (x.count + 1) / 2;
            put({a, x.q_len, x.kv_len});
            put({x.count - a, x.q_len, x.kv_len});
        } else {
            put(x);
        }
    }
    return h;
}

// The batch's shared-prefix groups: as listed, or as shared_groups equal groups.
void add_shared_prefixes(const IterationShape& shape, const std::vector<SharedPrefixGroup>* groups,
                         models::TokenBatch& batch) {
    if (groups) {
        int64_t q = 0, k = 0, w = 0;
        for (const auto& g : *groups) {
            batch.shared_prefix.push_back({1, g.queries, g.keys});
            q += g.queries;
            k += g.keys;
            w += g.queries * g.keys;
        }
        FATHOM_CHECK(static_cast<int64_t>(groups->size()) == shape.shared_groups && q == shape.shared_queries &&
                         k == shape.shared_keys && w == shape.shared_work,
                     "shared-prefix groups");
    } else if (shape.shared_groups > 0) {
        // Equal groups: the keys (bytes read) add up exactly, queries per group chosen so that
        // groups x queries x keys matches the FLOPs (shared_work) up to rounding.
        const int64_t g = shape.shared_groups;
        const int64_t keys = std::max<int64_t>(1, (shape.shared_keys + g / 2) / g);
        const int64_t queries = std::max<int64_t>(
            2,
            static_cast<int64_t>(std::llround(static_cast<double>(shape.shared_work) / static_cast<double>(g * keys))));
        batch.shared_prefix.push_back({g, queries, keys});
    }
}

}  // namespace

IterationCoster::IterationCoster(const models::ModelSpec& model, const PoolLayout& pool,
                                 const models::KernelStack& kernels, const EngineSettings& engine,
                                 const models::CostModel& cost, const hardware::NetworkModel& network,
                                 double expert_load)
    : model_(model),
      pool_(pool),
      kernels_(kernels),
      engine_(engine),
      coster_(cost, network, layout_),
      expert_load_(expert_load) {
    // Serving engines run latent attention's decodes in absorbed form over the compressed cache.
    kernels_.mla_absorb = model.mla.enabled();
    layout_.tp = pool.tp;
    layout_.pp = pool.pp;
    // Layers split as evenly as possible, the remainder on the first stages (vLLM get_pp_indices).
    const int pp = pool.pp;
    const int base = static_cast<int>(model.layers / pp), rem = static_cast<int>(model.layers % pp);
    int first = 0;
    for (int s = 0; s < pp; ++s) {
        layers_per_stage_.push_back(base + (s < rem ? 1 : 0));
        int moe = 0;
        for (int l = first; l < first + layers_per_stage_.back(); ++l) moe += model.is_moe_layer(l) ? 1 : 0;
        moe_layers_per_stage_.push_back(moe);
        first += layers_per_stage_.back();
    }
    layout_.etp = pool.tp;  // experts split over the TP group, as vLLM's fused MoE does (no EP)
    if (pool.ep > 1) {
        // Data-parallel attention, experts over the EP group of `ep` consecutive GPUs (tp = pp = 1),
        // each GPU's tokens dispatched with the pool's dispatcher (fp8 rows under an fp8 recipe).
        layout_.etp = 1;
        layout_.ep = pool.ep;
        layout_.dp = pool.ep;
        kernels_.fp8_dispatch = true;
        // With DeepEP the engines run the experts in DeepGEMM's grouped fp8 kernels (SGLang: the
        // contiguous layout after normal dispatch, the masked one after low-latency dispatch; LMSYS
        // blog 2025-05-05, "DeepGEMM integrates smoothly with the dispatch modes of DeepEP").
        if (pool.dispatcher != models::MoeDispatcher::AllToAll)
            kernels_.expert_gemm_kernel = models::GemmKernel::DeepGemm;
    }
}

models::LayerInputs IterationCoster::layer_inputs(const IterationShape& shape,
                                                  const std::vector<int64_t>* decode_kv_lens,
                                                  const std::vector<SharedPrefixGroup>* groups) const {
    models::LayerInputs in;
    in.shard.tp = pool_.tp;
    in.shard.etp = pool_.tp;
    in.kernels = kernels_;
    if (pool_.ep > 1) {
        const hardware::GroupLayout ep = coster_.group_layout(GroupKind::ep);
        in.shard.ep = pool_.ep;
        in.shard.etp = 1;
        in.shard.dispatcher = pool_.dispatcher;
        in.shard.ep_ranks_per_node = ep.ranks_per_node;
        in.shard.ep_nodes = ep.nodes;
        in.routing.busiest_rank_load = expert_load_;
    }
    for (const auto& p : shape.prefills) in.batch.slices.push_back({1, p.tokens, p.context + p.tokens});
    if (shape.decodes > 0) {
        if (decode_kv_lens) {
            FATHOM_CHECK(static_cast<int64_t>(decode_kv_lens->size()) == shape.decodes, "decode KV lengths");
            for (int64_t kv : *decode_kv_lens) in.batch.slices.push_back({1, shape.verify, kv});
        } else {
            // The decodes at their mean KV length; the remainder spread one key each so that the
            // keys read add up to decode_kv exactly.
            const int64_t mean = shape.decode_kv / shape.decodes, extra = shape.decode_kv % shape.decodes;
            if (extra > 0) in.batch.slices.push_back({extra, shape.verify, mean + 1});
            if (shape.decodes - extra > 0) in.batch.slices.push_back({shape.decodes - extra, shape.verify, mean});
        }
    }
    add_shared_prefixes(shape, groups, in.batch);
    return in;
}

IterationCost IterationCoster::exact(const IterationShape& shape, const std::vector<int64_t>* decode_kv_lens,
                                     const std::vector<SharedPrefixGroup>* groups) {
    FATHOM_CHECK(shape.tokens() > 0, "an iteration without tokens");
    const models::LayerInputs in = layer_inputs(shape, decode_kv_lens, groups);
    auto comm_seconds = [](const PassCost& c) {
        double t = 0;
        for (size_t g = 0; g < c.lead.size(); ++g) t += c.lead[g] + c.trail[g];
        return t;
    };
    auto pass_seconds = [&](const PassCost& c) {
        return c.compute + comm_seconds(c);  // no overlap: an inference engine waits for each collective
    };
    // A layer kind's time over the iteration's batch: compute, then its collectives in series; under
    // two-batch overlap (two_batch_overlap.h) the two halves' stages by the dispatcher's schedule:
    // DeepSeek's decode schedule for DeepEP's low-latency kernels, its prefill schedule for the
    // normal ones (each stage's compute slowed by the SMs the kernels hold while they run, f);
    // otherwise the halves' compute on one stream and their collectives on the other,
    // max(M, C + f M). The SMs' share is the measured mechanism
    // (hardware/calibration/README.md, "Compute beside communication": a 16-32-CTA copy beside a
    // GEMM slows it 19-29%); the bandwidth the communication loses beside compute (its "slower
    // than unit test" times in SGLang's prefill profile) is not modelled.
    const bool tbo = engine_.two_batch_overlap && in.batch.shared_prefix.empty() && in.batch.tokens() > 1;
    const double units = pool_.accelerator.compute_units;
    const double comm_share =
        units > 0 && in.shard.ep > 1 ? std::min(1.0, models::dispatcher_sms(in.shard.dispatcher) / units) : 0.0;
    std::pair<models::LayerInputs, models::LayerInputs> halves{in, in};
    if (tbo) {
        auto [a, b] = split_batch(in.batch);
        halves.first.batch = std::move(a);
        halves.second.batch = std::move(b);
    }
    auto layer_seconds = [&](models::LayerProgram (*build)(const models::ModelSpec&, const models::LayerInputs&)) {
        if (!tbo) return pass_seconds(coster_.cost(build(model_, in)));
        const models::LayerProgram pa = build(model_, halves.first), pb = build(model_, halves.second);
        if (build == &models::moe_layer_forward && in.shard.ep > 1) {
            if (in.shard.dispatcher == models::MoeDispatcher::DeepEpLowLatency)
                return decode_overlap_seconds(moe_stages(pa, coster_), moe_stages(pb, coster_));
            if (in.shard.dispatcher == models::MoeDispatcher::DeepEp)
                return prefill_overlap_seconds(moe_stages(pa, coster_), moe_stages(pb, coster_), comm_share);
        }
        const PassCost a = coster_.cost(pa), b = coster_.cost(pb);
        return stream_overlap_seconds(a.compute + b.compute, comm_seconds(a) + comm_seconds(b), comm_share);
    };
    double layer = model_.moe_layers() < model_.layers ? layer_seconds(&models::dense_layer_forward) : 0.0;
    layer += lora_seconds(shape, in);
    const double moe_layer = model_.moe_layers() > 0 ? layer_seconds(&models::moe_layer_forward) : 0.0;
    const double embedding = pass_seconds(coster_.cost(models::embedding_forward(model_, in)));
    double head = 0;
    if (shape.samples > 0) {
        models::LayerInputs hin = in;
        hin.batch = models::TokenBatch::uniform(shape.samples, 1, 1);
        head = pass_seconds(coster_.cost(models::head_forward(model_, hin)));
        // vLLM gathers the vocab-parallel logits of the sampling rows on one rank (fp32).
        head += coster_.collective(hardware::Collective::AllGather,
                                   static_cast<double>(shape.samples) * static_cast<double>(model_.vocab) * 4.0,
                                   GroupKind::tp);
    }
    IterationCost c;
    const int pp = pool_.pp;
    for (int s = 0; s < pp; ++s) {
        const int moe = moe_layers_per_stage_[static_cast<size_t>(s)];
        double t = layer * (layers_per_stage_[static_cast<size_t>(s)] - moe) + moe_layer * moe;
        if (s == 0) {
            // Multi-step scheduling: a decode-only iteration shares its round's CPU time.
            const double share =
                shape.prefills.empty() ? 1.0 / static_cast<double>(std::max<int64_t>(1, engine_.scheduler_steps)) : 1.0;
            t += embedding + share * (engine_.iteration_overhead_s +
                                      engine_.per_sequence_overhead_s *
                                          static_cast<double>(std::max(shape.sequences, shape.samples)));
        }
        if (s == pp - 1) t += head;
        c.stage_s.push_back(t);
    }
    if (pp > 1)
        c.p2p_s =
            coster_.collective(hardware::Collective::SendRecv, models::stage_boundary_bytes(model_, in), GroupKind::pp);
    return c;
}

double IterationCoster::lora_seconds(const IterationShape& shape, const models::LayerInputs& in) {
    if (shape.adapters == 0 || !lora_.enabled()) return 0;
    // The adapters' kernels run after their projections, the layer's collectives untouched.
    const PassCost c = coster_.cost(
        models::lora_serving_program(models::dense_layer_forward(model_, in), lora_.rank, shape.adapters,
                                     lora_.modules == LoraModules::Attention, models::is_gated(model_.activation)));
    return c.compute;
}

void IterationCoster::set_lora(const LoraSettings& lora) {
    lora_ = lora;
    lora_cache_.clear();
}

const IterationCost& IterationCoster::seconds(const IterationShape& shape) {
    key_.clear();
    key_.push_back(shape.decodes);
    key_.push_back(shape.decodes > 0 ? bucket_tokens(shape.decode_kv) : 0);
    key_.push_back(shape.samples);
    key_.push_back(shape.sequences);
    key_.push_back(shape.verify);
    key_.push_back(shape.shared_groups);
    key_.push_back(shape.shared_groups > 0 ? bucket_tokens(shape.shared_keys) : 0);
    key_.push_back(shape.shared_groups > 0 ? bucket_tokens(shape.shared_work) : 0);
    for (const auto& p : shape.prefills) {
        key_.push_back(bucket_tokens(p.tokens));
        key_.push_back(bucket_tokens(p.context));
    }
    const uint64_t h = ShapeCache<IterationCost>::hash(key_);
    const IterationCost* found = cache_.find(key_, h);
    const IterationCost& base = found ? *found : cache_.insert(key_, h, priced_or_shared());
    if (shape.adapters == 0 || !lora_.enabled()) return base;
    // Multi-LoRA: the base iteration plus the adapters' kernels, which depend on the batch's
    // tokens and distinct adapters alone (their own cache: the base shapes are not multiplied by
    // the adapter counts).
    const int64_t tokens = bucket_tokens(shape.tokens());
    auto lo = lora_cache_.find({tokens, shape.adapters});
    if (lo == lora_cache_.end()) {
        models::LayerInputs in;
        in.shard.tp = pool_.tp;
        in.shard.etp = pool_.tp;
        in.kernels = kernels_;
        in.batch = models::TokenBatch::uniform(tokens, 1, 1);
        IterationShape s;
        s.adapters = shape.adapters;
        lo = lora_cache_.emplace(std::make_pair(tokens, shape.adapters), lora_seconds(s, in)).first;
    }
    with_lora_ = base;
    for (size_t s = 0; s < with_lora_.stage_s.size(); ++s)
        with_lora_.stage_s[s] += lo->second * static_cast<double>(layers_per_stage_[s]);
    return with_lora_;
}

IterationCost IterationCoster::priced_or_shared() {
    if (!share_) return exact(represented());
    const IterationCostShare::Entry* e = share_->find(signature_, key_);
    if (!e) {
        // The ops this shape prices, apart from the ones priced before, go with it into the share.
        OpSources& mine = coster_.sources();
        OpSources before = std::exchange(mine, OpSources{});
        IterationCost c = exact(represented());
        e = &share_->insert(signature_, key_, std::move(c), mine);
        mine = std::move(before);
    }
    if (std::find(merged_.begin(), merged_.end(), e->sources) == merged_.end()) {
        coster_.sources().merge(*e->sources);
        merged_.push_back(e->sources);
    }
    return e->cost;
}

const IterationCostShare::Entry* IterationCostShare::find(uint64_t signature, const std::vector<int64_t>& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    scratch_.assign(1, static_cast<int64_t>(signature));
    scratch_.insert(scratch_.end(), key.begin(), key.end());
    return entries_.find(scratch_, ShapeCache<Entry>::hash(scratch_));
}

const IterationCostShare::Entry& IterationCostShare::insert(uint64_t signature, const std::vector<int64_t>& key,
                                                            IterationCost cost, const OpSources& sources) {
    std::lock_guard<std::mutex> lock(mutex_);
    scratch_.assign(1, static_cast<int64_t>(signature));
    scratch_.insert(scratch_.end(), key.begin(), key.end());
    const uint64_t h = ShapeCache<Entry>::hash(scratch_);
    // Another thread may have priced the same shape meanwhile: the same cost, kept once.
    if (const Entry* e = entries_.find(scratch_, h)) return *e;
    auto s = std::find(sources_.begin(), sources_.end(), sources);
    if (s == sources_.end()) s = sources_.insert(sources_.end(), sources);
    return entries_.insert(scratch_, h, Entry{std::move(cost), &*s});
}

size_t IterationCostShare::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
}

IterationShape IterationCoster::represented() const {
    IterationShape rep;
    rep.decodes = key_[0];
    rep.decode_kv = std::max(key_[1], rep.decodes * key_[4]);
    rep.samples = key_[2];
    rep.sequences = key_[3];
    rep.verify = key_[4];
    rep.shared_groups = key_[5];
    rep.shared_keys = key_[6];
    rep.shared_work = key_[7];
    for (size_t i = 8; i + 1 < key_.size(); i += 2) rep.prefills.push_back({key_[i], key_[i + 1]});
    return rep;
}

}  // namespace fathom::workloads::serving
