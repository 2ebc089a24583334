#include "workloads/serving/replica.h"

#include <algorithm>

namespace fathom::workloads::serving {
namespace {

// Shared-prefix attention (Hydragen): the batch's decodes grouped by the shared-prefix group blocks
// they reference in the prefix cache, identified by the last such block (equal identities mean
// equal prefixes). A group of two or more decodes reads its prefix once; each member's own
// attention keeps the keys after the prefix. A prefix shorter than one full block, or a request
// whose prefix blocks are private copies (admitted before the prefix was cached), is not shared.
void group_shared_prefixes(const Batch& b, int64_t block_size, IterationShape& shape) {
    std::vector<std::pair<uint64_t, int64_t>> members;  // (identity of the last shared block, blocks)
    auto add = [&](const Sequence* s) {
        const int64_t blocks = std::min(s->cached_blocks, s->req.prefix_tokens / block_size);
        if (blocks > 0) members.emplace_back(s->block_ids[static_cast<size_t>(blocks - 1)], blocks);
    };
    for (const Sequence* s : b.decode) add(s);
    for (const Sequence* s : b.padding) add(s);
    std::sort(members.begin(), members.end());
    for (size_t i = 0; i < members.size();) {
        size_t j = i;
        while (j < members.size() && members[j].first == members[i].first) ++j;
        const int64_t n = static_cast<int64_t>(j - i);
        if (n >= 2) {
            const int64_t keys = members[i].second * block_size;
            ++shape.shared_groups;
            shape.shared_queries += n;
            shape.shared_keys += keys;
            shape.shared_work += n * keys;
            shape.decode_kv -= n * keys;
        }
        i = j;
    }
}

}  // namespace

PoolCosts::PoolCosts(const ServingInputs& in, const PoolLayout& pool, const models::CostModel& cost, size_t index)
    : iteration(in.model, pool, in.plan.kernels, in.plan.engine, cost, in.network, in.plan.expert_load),
      draft(in.model, in.plan.speculative, pool, in.plan.kernels, cost, in.network) {
    if (in.plan.lora.enabled()) iteration.set_lora(in.plan.lora);
    if (in.cost_share) iteration.set_share(in.cost_share, in.pool_signatures.at(index));
}

Replica::Replica(sim::Simulator& sim, ServingSignals& signals, ReplicaHost& host, const ReplicaPlace& place,
                 const PoolLayout& pool, const ReplicaMemory& mem, const ServingInputs& in, PoolCosts& costs)
    : sim_(sim),
      signals_(signals),
      host_(host),
      place_(place),
      state_(place.id, in.plan.batching, in.plan.kv, mem.kv_blocks, mem.block_bytes),
      coster_(costs.iteration),
      policy_(make_multi_step(policy_registry().get(in.plan.batching.policy).factory(in.plan.batching),
                              in.plan.batching.policy == "static" ? 1 : in.plan.engine.scheduler_steps)),
      stage_free_s_(static_cast<size_t>(pool.pp), 0.0),
      slots_(static_cast<size_t>(pool.pp)),
      pcie_bandwidth_(in.cluster.pcie.achievable_bandwidth()),
      kv_copy_s_(kv_block_copy_seconds(in.plan.kv.offload_copy, in.cluster.pcie, in.model,
                                       (in.model.layers + pool.pp - 1) / pool.pp)),
      ssd_bandwidth_(in.cluster.ssd ? in.cluster.ssd->read_bandwidth * in.cluster.ssds_per_node /
                                          std::max(1, in.cluster.gpus_per_node)
                                    : 0.0),
      store_bandwidth_(in.cluster.nic_bandwidth_per_gpu() *
                       (in.cluster.nic.efficiency > 0 ? in.cluster.nic.efficiency : 1.0)),
      store_latency_(in.cluster.nic.latency),
      layerwise_load_(in.plan.kv.offload_load == "layerwise"),
      saved_per_token_(in.plan.kv.offload_bytes > 0 && in.plan.kv.offload_store == "blocking"
                           ? mem.block_bytes / static_cast<double>(in.plan.kv.block_size)
                           : 0.0),
      save_decodes_(in.plan.kv.offload_store_decode),
      stage_layers_(static_cast<double>(std::max<int64_t>(1, (in.model.layers + pool.pp - 1) / pool.pp))),
      spec_(in.plan.speculative),
      spec_rate_(spec_.enabled() ? spec_.rate() : 0.0),
      seed_(in.seed),
      draft_(costs.draft) {
    for (size_t i = slots_.size(); i-- > 0;) free_slots_.push_back(i);
    if (spec_.enabled()) state_.set_lookahead(spec_.tokens);
    const LoraSettings& lora = in.plan.lora;
    if (lora.enabled()) {
        if (lora.adapters <= kStampedAdapters) adapter_seen_.assign(static_cast<size_t>(lora.adapters) + 1, 0);
        state_.set_lora(LoraPool(lora.max_loras, lora_adapter_bytes(in.model, pool.tp, pool.pp, lora, lora.rank)),
                        lora.admission);
    }
}

ReplicaLoad Replica::load() const {
    ReplicaLoad l;
    l.outstanding = outstanding_;
    l.kv_used = state_.kv().capacity()
                    ? static_cast<double>(state_.kv().referenced()) / static_cast<double>(state_.kv().capacity())
                    : 0;
    return l;
}

void Replica::enqueue(Sequence* s) {
    s->replica = place_.id;
    s->phase = Phase::Waiting;
    state_.waiting.push_back(s);
    wake();
}

void Replica::receive(Sequence* s) {
    received_.push_back(s);
    wake();
}

void Replica::wake() {
    // Launch at the end of this instant, once every request arriving at it is queued (a batch
    // formed at the first of several simultaneous arrivals would hold that one alone).
    if (wake_pending_) return;
    wake_pending_ = true;
    sim_.schedule_at(sim_.now(), [this] {
        wake_pending_ = false;
        try_launch();
    });
}

void Replica::release_sent(Sequence* s) {
    state_.release(*s);
    s->phase = Phase::Done;
    note_kv(sim_.now());
    try_launch();
}

void Replica::note_kv(sim::Time now) {
    signals_.kv_use.emit({place_.index, place_.first_rank, now, state_.kv().referenced()});
}

IterationShape Replica::shape_of(Batch& b, sim::Time now) const {
    IterationShape shape;
    for (const auto& [s, c] : b.prefill) {
        shape.prefills.push_back({c, s->computed});
        if (s->computed + c >= s->prefill_target) ++shape.samples;
        s->in_flight = true;
        if (s->scheduled == kNever) s->scheduled = now;
    }
    const int64_t verify = 1 + state_.lookahead();
    for (Sequence* s : b.decode) {
        shape.decode_kv += s->computed + verify;
        s->in_flight = true;
    }
    for (Sequence* s : b.padding) {
        shape.decode_kv += s->computed + 1;
        s->in_flight = true;
    }
    shape.decodes = static_cast<int64_t>(b.decode.size() + b.padding.size());
    if (state_.kv_settings().shared_prefix_attention) group_shared_prefixes(b, state_.kv().block_size(), shape);
    // A verification samples at each of its positions (padding runs static batches: no speculation).
    if (verify > 1) shape.verify = verify;
    shape.samples += shape.decodes * verify;
    shape.sequences = static_cast<int64_t>(b.prefill.size()) + shape.decodes;
    if (state_.lora_enabled()) shape.adapters = distinct_adapters(b);
    return shape;
}

// Up to kStampedAdapters adapters, by a stamp per adapter (no sort); beyond, by sorting the batch's.
int64_t Replica::distinct_adapters(const Batch& b) const {
    int64_t n = 0;
    if (!adapter_seen_.empty()) {
        if (++batch_stamp_ == 0) {  // wrapped: forget every stamp
            std::fill(adapter_seen_.begin(), adapter_seen_.end(), 0);
            batch_stamp_ = 1;
        }
        auto count = [&](const Sequence* s) {
            const auto a = static_cast<size_t>(s->req.adapter);
            if (a == 0 || adapter_seen_[a] == batch_stamp_) return;
            adapter_seen_[a] = batch_stamp_;
            ++n;
        };
        for (const auto& [s, c] : b.prefill) count(s);
        for (const Sequence* s : b.decode) count(s);
        return n;
    }
    adapters_.clear();
    for (const auto& [s, c] : b.prefill) adapters_.push_back(s->req.adapter);
    for (const Sequence* s : b.decode) adapters_.push_back(s->req.adapter);
    std::sort(adapters_.begin(), adapters_.end());
    for (size_t i = 0; i < adapters_.size(); ++i)
        n += adapters_[i] != 0 && (i == 0 || adapters_[i] != adapters_[i - 1]) ? 1 : 0;
    return n;
}

void Replica::try_launch() {
    if (free_slots_.empty()) return;
    const sim::Time now = sim_.now();
    if (sim::Time::from_seconds(stage_free_s_[0]) > now) {  // the first stage is still busy
        if (!wake_pending_) {
            wake_pending_ = true;
            sim_.schedule_at(engine_time(sim_, stage_free_s_[0]), [this] {
                wake_pending_ = false;
                try_launch();
            });
        }
        return;
    }
    // Decode pool: sequences whose KV arrived join the running batch while blocks and slots allow.
    while (!received_.empty() && state_.running_count() < state_.batching().max_num_seqs) {
        Sequence* s = received_.front();
        const int64_t need = KvCache::blocks_for(s->computed + 1, state_.kv().block_size());
        if (!state_.kv().allocate(need)) break;
        s->kv_blocks = need;
        s->phase = Phase::Running;
        state_.running.push_back(s);
        received_.pop_front();
    }
    const size_t slot = free_slots_.back();
    Batch& b = slots_[slot];
    b.clear();
    policy_->form(state_, b);
    start_parked(now);
    if (b.empty()) {
        state_.compact_running();  // a policy may have released sequences (static batching)
        note_kv(now);
        return;
    }
    free_slots_.pop_back();
    const IterationShape shape = shape_of(b, now);
    const IterationCost& cost = coster_.seconds(shape);
    const double draft_s = shape.verify > 1 ? draft_.seconds(shape.decodes, shape.decode_kv) : 0.0;
    // Pipeline: stage s starts when the batch left stage s-1 and stage s is free. Swapping blocks
    // and loading LoRA adapters over PCIe delay the first stage (vLLM swaps and loads before the
    // forward pass); so does an offload tier's load, unless it runs layer by layer beside the
    // stages, whose last layer then waits for the whole load.
    const double load_bytes = b.swap_bytes + (state_.lora() ? state_.lora()->take_load_bytes() : 0.0);
    const TierLoad tier = state_.take_tier_load();
    const double tier_s = tier_load_seconds(tier);
    if (saved_per_token_ > 0) {  // LMCache-style stores: this iteration's tokens, copied before the next
        int64_t tokens = save_decodes_ ? shape.decodes : 0;
        for (const PrefillChunk& c : shape.prefills) tokens += c.tokens;
        state_.add_saved_bytes(static_cast<double>(tokens) * saved_per_token_);
    }
    // A blocking store of the previous iteration's blocks runs before this one, whatever the loads do.
    double t = now.seconds() + (load_bytes > 0 ? load_bytes / pcie_bandwidth_ : 0.0) +
               (tier.saved_bytes > 0 ? tier.saved_bytes / pcie_bandwidth_ : 0.0);
    const double tier_done = t + tier_s;
    if (!layerwise_load_) t = tier_done;
    for (size_t s = 0; s < stage_free_s_.size(); ++s) {
        if (s > 0) t += cost.p2p_s;
        t = std::max(t, stage_free_s_[s]) + cost.stage_s[s];
        if (layerwise_load_ && tier_s > 0) t = std::max(t, tier_done + cost.stage_s[s] / stage_layers_);
        t += s + 1 == stage_free_s_.size() ? draft_s : 0.0;
        stage_free_s_[s] = t;
    }
    const sim::Time end = engine_time(sim_, t);
    signals_.iteration.emit({place_.index, place_.first_rank, now, end, b, shape});
    note_kv(now);
    sim_.schedule_at(end, [this, slot] { complete(slot); });
    if (!free_slots_.empty()) try_launch();  // pipeline: the next batch enters stage 0 when it frees
}

double Replica::tier_load_seconds(const TierLoad& l) const {
    return static_cast<double>(l.host_blocks) * kv_copy_s_ + (l.host_bytes > 0 ? l.host_bytes / pcie_bandwidth_ : 0.0) +
           (l.ssd_bytes > 0 ? l.ssd_bytes / std::min(ssd_bandwidth_, pcie_bandwidth_) : 0.0) +
           (l.store_bytes > 0 ? store_latency_ + l.store_bytes / store_bandwidth_ : 0.0);
}

void Replica::start_parked(sim::Time now) {
    if (!state_.has_parked()) return;
    for (const ReplicaState::ParkedLoad& p : state_.take_parked()) {
        copy_free_s_ = std::max(now.seconds(), copy_free_s_) + tier_load_seconds(p.load);
        Sequence* s = p.seq;
        sim_.schedule_at(engine_time(sim_, copy_free_s_), [this, s] {
            s->phase = Phase::Waiting;
            state_.waiting.push_front(s);
            wake();
        });
    }
}

// A sequence of the completed batch that has sampled its last token, or (prefill pool) its first.
void Replica::settle(Sequence* s) {
    if (s->phase != Phase::Running || s->prefilling() || s->generated == 0) return;
    if (s->done()) {
        --outstanding_;
        if (!policy_->keeps_finished()) {
            state_.release(*s);
            s->phase = Phase::Done;
        }
        policy_->finished(*s);
        host_.finished(s);
    } else if (place_.role == PoolRole::Prefill) {
        s->phase = Phase::Transferring;  // keeps its blocks until the KV is sent
        --outstanding_;
        host_.prefilled(*this, s);
    }
}

void Replica::complete(size_t slot) {
    Batch& b = slots_[slot];
    const sim::Time now = sim_.now();
    auto emit = [&](Sequence* s) {  // s samples a token
        ++s->generated;
        if (s->first_token == kNever) {
            s->first_token = now;
        } else {
            // Field by field: a brace-built NextToken went through the stack, whose two 8-byte
            // stores and one 16-byte load stalled store forwarding on every token.
            NextToken& k = next_tokens_.emplace_back();
            k.seq = s;
            k.previous = s->last_token;
        }
        s->last_token = now;
    };
    for (const auto& [s, c] : b.prefill) {
        s->in_flight = false;
        s->computed += c;
        state_.publish(*s);
        if (!s->prefilling()) emit(s);
    }
    for (Sequence* s : b.decode) {
        s->in_flight = false;
        // Speculation: the accepted drafts and the target's own token, up to the output's end.
        int64_t tokens = 1;
        if (state_.lookahead() > 0)
            tokens = std::min<int64_t>(
                1 + (spec_.positions.empty()
                         ? accepted_drafts(spec_rate_, spec_.tokens, seed_, s->req.id, s->generated)
                         : accepted_drafts(spec_.positions, spec_.tokens, seed_, s->req.id, s->generated)),
                s->req.output_tokens - s->generated);
        s->computed += tokens;
        for (int64_t i = 0; i < tokens; ++i) emit(s);
    }
    for (Sequence* s : b.padding) s->in_flight = false;
    if (!next_tokens_.empty()) signals_.next_tokens.emit({now, next_tokens_});
    next_tokens_.clear();
    for (const auto& [s, c] : b.prefill) settle(s);
    for (Sequence* s : b.decode)
        if (s->generated == s->req.output_tokens) settle(s);
    b.clear();
    free_slots_.push_back(slot);
    state_.compact_running();
    note_kv(now);
    signals_.iteration_done.emit({place_.index, place_.first_rank, now, state_.kv().referenced()});
    try_launch();
}

}  // namespace fathom::workloads::serving
