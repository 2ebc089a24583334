#include "plans/constraints.h"

#include "plans/keys.h"
#include "sim/text.h"
#include "workloads/serving/formats.h"
#include "workloads/serving/serving_memory.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <cstdio>
#include <numeric>

namespace fathom::plans {

std::string describe(const std::vector<Violation>& violations) {
    if (violations.empty()) return "";
    std::string msg = "impossible plan: " + violations.front().message;
    for (size_t i = 1; i < violations.size(); ++i) msg += "; also " + violations[i].key + ": " + violations[i].message;
    return msg;
}

sim::InputError plan_error(const std::vector<Violation>& violations, const std::string& file) {
    return sim::InputError(describe(violations), file, 0, violations.empty() ? "" : violations.front().key);
}

namespace {

template <typename T>
std::string str(T x) {
    return std::to_string(x);
}

void add(std::vector<Violation>& v, std::string key, std::string msg) { v.push_back({std::move(key), std::move(msg)}); }

// The plan against the cluster and the model's dimensions: GPU count, heads and MLP width over tp.
void check_shape(std::vector<Violation>& v, const models::ModelSpec& m, const hardware::ClusterSpec& c,
                 const workloads::TrainingPlan& p) {
    const auto& l = p.layout;
    if (p.gpus() != c.gpus())
        add(v, "parallel.dp",
            "plan uses dp x tp x pp x cp = " + str(l.dp) + " x " + str(l.tp) + " x " + str(l.pp) + " x " + str(l.cp) +
                " = " + str(p.gpus()) + " GPUs but the cluster has " + str(c.gpus()));
    if (m.heads % l.tp != 0)
        add(v, "parallel.tp", "tp = " + str(l.tp) + " does not divide the " + str(m.heads) + " attention heads");
    if (m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0)
        add(v, "parallel.tp",
            "tp = " + str(l.tp) + " and the " + str(m.kv_heads) + " key/value heads do not divide one another");
    if (m.moe_layers() < m.layers && m.ffn % l.tp != 0)
        add(v, "parallel.tp", "tp = " + str(l.tp) + " does not divide the MLP width " + str(m.ffn));
}

// Packed documents, LoRA and recomputation modes against what the model and stack have.
void check_features(std::vector<Violation>& v, const models::ModelSpec& m, const workloads::TrainingPlan& p) {
    const auto& l = p.layout;
    const auto& t = p.training;
    if (t.packed()) {
        if (auto why = t.documents.check(); !why.empty()) add(v, "training.documents", why);
        if (l.cp > 1) add(v, "training.documents", "packed documents with context parallelism are not modelled yet");
        if (!p.stack.kernels.flash_attention)
            add(v, "training.documents",
                "packed documents need a varlen (flash) attention kernel; the stack's is unfused");
    }
    if (t.lora_rank > 0 && m.moe.enabled())
        add(v, "training.lora_rank", "LoRA on mixture-of-experts models (adapters on the experts) is not modelled yet");
    if (t.recompute_mla_up_proj && !m.mla.enabled())
        add(v, "training.recompute_mla_up_proj", "the model has no latent attention (model.mla) to up-project");
    if (t.recompute_num_layers > 0 && t.recompute != workloads::Recompute::Full)
        add(v, "training.recompute_num_layers",
            "counts the layers of full recomputation: set training.recompute: full");
}

// Expert parallelism and routing: on a dense model none, on a MoE model degrees that divide.
void check_experts(std::vector<Violation>& v, const models::ModelSpec& m, const workloads::TrainingPlan& p) {
    const auto& l = p.layout;
    const auto& t = p.training;
    if (!m.moe.enabled()) {
        if (t.recompute_moe) add(v, "training.recompute_moe", "the model has no mixture-of-experts layers");
        if (t.moe_routing.zipf > 0 || !t.moe_routing.expert_loads.empty() || t.moe_routing.capacity_factor > 0)
            add(v, "training.moe_zipf", "routing settings on a model without experts (architecture: dense)");
        if (l.ep > 1)
            add(v, "parallel.ep", "ep = " + str(l.ep) + " but the model has no experts (architecture: dense)");
        if (l.etp > 1)
            add(v, "parallel.etp", "etp = " + str(l.etp) + " but the model has no experts (architecture: dense)");
    } else {
        const auto& e = m.moe;
        if (e.num_experts % l.ep != 0)
            add(v, "parallel.ep", "ep = " + str(l.ep) + " does not divide the " + str(e.num_experts) + " experts");
        if (l.etp != 1 && l.etp != l.tp)
            add(v, "parallel.etp",
                "etp = " + str(l.etp) + " must be 1 or tp = " + str(l.tp) +
                    " (the routed tokens are gathered over the tensor-parallel group)");
        else if (e.expert_ffn % l.etp != 0)
            add(v, "parallel.etp", "etp = " + str(l.etp) + " does not divide the expert width " + str(e.expert_ffn));
        const long stage_ranks = static_cast<long>(l.tp) * l.cp * l.dp;
        if (stage_ranks % (static_cast<long>(l.ep) * l.etp) != 0)
            add(v, "parallel.ep",
                "ep x etp = " + str(static_cast<long>(l.ep) * l.etp) + " does not divide the tp x cp x dp = " +
                    str(stage_ranks) + " ranks of a pipeline stage the experts spread over");
        if (e.shared_experts > 0 && (e.shared_experts * e.expert_ffn) % l.tp != 0)
            add(v, "parallel.tp",
                "tp = " + str(l.tp) + " does not divide the shared experts' width " +
                    str(e.shared_experts * e.expert_ffn));
        const auto& loads = t.moe_routing.expert_loads;
        if (!loads.empty() && static_cast<int64_t>(loads.size()) != e.num_experts)
            add(v, "training.moe_expert_loads",
                "needs one entry per expert (" + str(e.num_experts) + "), got " + str(loads.size()));
        else if (!loads.empty() && std::accumulate(loads.begin(), loads.end(), int64_t{0}) == 0)
            add(v, "training.moe_expert_loads", "all loads are zero");
        if (!loads.empty() && t.moe_routing.zipf > 0)
            add(v, "training.moe_zipf", "give measured loads (moe_expert_loads) or a Zipf skew, not both");
        if (t.moe_routing.capacity_factor > 0 && t.moe_routing.capacity_factor < 1)
            add(v, "training.moe_capacity_factor", "below 1 every expert drops tokens even under balanced routing");
        if (l.tp > 1 && !l.sequence_parallel)
            add(v, "parallel.sequence_parallel",
                "mixture-of-experts layers with tp > 1 need sequence parallelism (Megatron-Core requires it)");
    }
}

// The pieces the model is split into: pp x vp virtual stages, over the schedule's routes.
void check_pipeline_split(std::vector<Violation>& v, const models::ModelSpec& m, const workloads::TrainingPlan& p) {
    const auto& l = p.layout;
    const auto& t = p.training;
    // A bidirectional schedule keeps a model copy per route.
    const auto* schedule = workloads::schedule_registry().find(t.schedule);
    const int routes = schedule ? schedule->factory()->routes() : 1;
    const long stages = static_cast<long>(l.pp) * l.vp / routes;
    const std::string pieces = routes > 1 ? "pp x vp / " + str(routes) + " (" + t.schedule + " keeps " + str(routes) +
                                                " model copies) = " + str(stages)
                                          : "pp x vp = " + str(l.pp) + " x " + str(l.vp) + " = " + str(stages);
    if ((static_cast<long>(l.pp) * l.vp) % routes != 0) {
        add(v, "parallel.vp", t.schedule + " needs pp x vp to be a multiple of " + str(routes));
    } else if (!t.layers_per_virtual_stage.empty()) {
        if (static_cast<long>(t.layers_per_virtual_stage.size()) != stages)
            add(v, "training.layers_per_stage",
                "needs " + pieces + " entries, got " + str(t.layers_per_virtual_stage.size()));
        else if (std::accumulate(t.layers_per_virtual_stage.begin(), t.layers_per_virtual_stage.end(), 0L) != m.layers)
            add(v, "training.layers_per_stage", "entries must sum to the model's " + str(m.layers) + " layers");
    } else if (m.layers % stages != 0) {
        add(v, "parallel.pp", "the model's " + str(m.layers) + " layers are not divisible by " + pieces);
    }
}

// The batch over dp and micro-batches, the sequence over cp, the schedule's own checks, the dtype.
void check_batch(std::vector<Violation>& v, const models::ModelSpec& m, const hardware::ClusterSpec& c,
                 const workloads::TrainingPlan& p) {
    const auto& l = p.layout;
    const auto& t = p.training;
    const int64_t per_step = int64_t{l.dp} * t.micro_batch;  // 64 bits: the product may not fit an int
    const bool batch_divides = t.global_batch % per_step == 0;
    if (!batch_divides)
        add(v, "training.global_batch_size",
            "global batch " + str(t.global_batch) + " is not a multiple of dp x micro_batch_size = " + str(per_step));
    if (t.seq_len % l.cp != 0)
        add(v, "parallel.cp", "cp = " + str(l.cp) + " does not divide seq_len " + str(t.seq_len));
    else if (l.cp > 1 && p.stack.cp_comm != models::CpComm::A2a && t.seq_len % (int64_t{2} * l.cp) != 0)
        add(v, "parallel.cp",
            "load-balanced context parallelism splits each sequence into 2 x cp = " + str(int64_t{2} * l.cp) +
                " chunks, which does not divide seq_len " + str(t.seq_len));
    if (l.cp > 1 && p.stack.cp_comm == models::CpComm::A2a && (m.heads / l.tp) % l.cp != 0)
        add(v, "parallel.cp",
            "Ulysses (stack.cp_comm: a2a) shards the " + str(m.heads / l.tp) +
                " attention heads per tensor-parallel rank over cp = " + str(l.cp) + ", which does not divide them");
    if (batch_divides) {
        const auto s = workloads::schedule_registry().get(t.schedule).factory();
        const std::string why = s->check(l.pp, l.vp, p.microbatches());
        if (!why.empty()) {
            const std::string key = s->check_key(l.pp, l.vp, p.microbatches());
            add(v, !key.empty() ? key : l.vp > 1 ? "parallel.vp" : "training.schedule", why);
        }
    }
    if (p.stack.kernels.gemm_dtype == hardware::Dtype::fp8 && !c.accelerator.has(hardware::Dtype::fp8))
        add(v, "stack.dtype", "accelerator '" + c.accelerator.id + "' has no fp8 tensor cores");
}

}  // namespace

std::vector<Violation> check_training_plan(const models::ModelSpec& m, const hardware::ClusterSpec& c,
                                           const workloads::TrainingPlan& p) {
    std::vector<Violation> v;
    // Every key within its declared range or choices (plans built in code skip the parser's checks).
    for (const auto& key : training_plan_keys()) {
        // The document-length distribution's fields depend on its kind (unused ones stay 0): its
        // own check below says what is wrong with it.
        if (key.info.section() == "training.documents") continue;
        const std::string why = check_value(key.info, key.get(p));
        if (!why.empty()) v.push_back({key.info.path, key.info.name() + " " + why});
    }
    if (!v.empty()) return v;
    check_shape(v, m, c, p);
    check_features(v, m, p);
    check_experts(v, m, p);
    check_pipeline_split(v, m, p);
    check_batch(v, m, c, p);
    if (p.stack.activation_offload == workloads::ActivationOffload::Ssd && !c.ssd)
        add(v, "stack.activation_offload",
            "ssd: the activations go to the nodes' SSDs, but the cluster has none (cluster.ssd, `fathom list "
            "hardware`)");
    return v;
}

std::vector<Violation> check_serving_size(const workloads::serving::ServingPlan& plan, int64_t max_requests) {
    const int64_t n = plan.traffic.synthetic.num_requests;
    if (!plan.traffic.trace.empty() || n <= max_requests) return {};
    return {{"traffic.num_requests", std::to_string(n) + " requests: more than " + std::to_string(max_requests) +
                                         ", the most a simulation may hold (about 400 bytes each; raise it with "
                                         "--max-requests)"}};
}

}  // namespace fathom::plans

namespace fathom::plans {

namespace {

using workloads::serving::PoolLayout;
using workloads::serving::ServingPlan;

// The serving format on a pool's device: a tensor rate for its GEMMs' dtype, a measured weight-only
// kernel for a weight-only one.
void check_format(std::vector<Violation>& v, const ServingPlan& p, const PoolLayout& l) {
    using hardware::Dtype;
    const Dtype d = p.kernels.gemm_dtype;
    const std::string name = workloads::serving::format_name(p.kernels);
    if (d != Dtype::bf16 && d != Dtype::fp16 && !l.accelerator.has(d))
        add(v, "serving.dtype",
            "accelerator '" + l.accelerator.id + "' has no " + std::string(sim::name(d)) + " tensor cores" +
                (d == Dtype::fp4                       ? " (w4a16 runs 4-bit weights at its 16-bit rate)"
                 : d == Dtype::fp8 || d == Dtype::int8 ? " (w8a16 runs 8-bit weights at its 16-bit rate)"
                                                       : ""));
    if (p.kernels.weight_only && !(l.accelerator.calibration.weight_only_efficiency > 0))
        add(v, "serving.dtype",
            name + ": accelerator '" + l.accelerator.id +
                "' has no measured weight-only kernel (calibration weight_only_efficiency in its catalog entry)");
}

// A pool's layout against the model's heads and layers, the cluster's nodes and the weight dtype.
void check_pool(std::vector<Violation>& v, const models::ModelSpec& m, const hardware::ClusterSpec& c,
                const ServingPlan& p, const PoolLayout& l, const std::string& prefix) {
    if (m.heads % l.tp != 0)
        add(v, prefix + ".tp", "tp = " + str(l.tp) + " does not divide the " + str(m.heads) + " attention heads");
    else if (m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0)
        add(v, prefix + ".tp",
            "tp = " + str(l.tp) + " and the " + str(m.kv_heads) + " key/value heads do not divide one another");
    if (l.pp > m.layers)
        add(v, prefix + ".pp", "pp = " + str(l.pp) + " exceeds the model's " + str(m.layers) + " layers");
    if (l.tp > c.gpus_per_node && l.tp % c.gpus_per_node != 0)
        add(v, prefix + ".tp", "tp = " + str(l.tp) + " spans nodes of " + str(c.gpus_per_node) + " GPUs unevenly");
    check_format(v, p, l);
}

// A pool's expert parallelism (or, without it, its TP split of the experts) against the model.
void check_moe_pool(std::vector<Violation>& v, const models::ModelSpec& m, const PoolLayout& l,
                    const std::string& prefix) {
    if (l.ep > 1 || l.redundant_experts > 0) {
        if (!m.moe.enabled()) return add(v, prefix + ".ep", "expert parallelism needs a mixture-of-experts model");
        if (l.ep == 1)
            return add(v, prefix + ".redundant_experts", "redundant expert copies need expert parallelism (ep > 1)");
        if (l.tp != 1 || l.pp != 1)
            add(v, prefix + ".ep",
                "ep > 1 runs data-parallel attention: it needs tp = 1 and pp = 1 (tp = " + str(l.tp) +
                    ", pp = " + str(l.pp) + ")");
        if (l.replicas % l.ep != 0)
            add(v, prefix + ".ep",
                "ep = " + str(l.ep) + " does not divide the pool's " + str(l.replicas) +
                    " data-parallel attention ranks (replicas)");
        if ((m.moe.num_experts + l.redundant_experts) % l.ep != 0)
            add(v, prefix + ".ep",
                "ep = " + str(l.ep) + " does not divide the " + str(m.moe.num_experts) + " experts + " +
                    str(l.redundant_experts) + " redundant copies (" + prefix + ".redundant_experts)");
        return;
    }
    if (l.dispatcher != models::MoeDispatcher::AllToAll)
        add(v, prefix + ".dispatcher", "a token dispatcher needs expert parallelism (ep > 1)");
    if (!m.moe.enabled()) return;
    if (m.moe.expert_ffn % l.tp != 0)
        add(v, prefix + ".tp", "tp = " + str(l.tp) + " does not divide the expert width " + str(m.moe.expert_ffn));
}

void check_traffic(std::vector<Violation>& v, const ServingPlan& p) {
    using namespace workloads::serving;
    const auto& t = p.traffic;
    if (t.trace.empty()) {
        if (t.synthetic.num_requests < 1) add(v, "traffic.num_requests", "missing: how many requests to generate");
        if (t.mode == ArrivalMode::Closed && t.concurrency < 1)
            add(v, "traffic.concurrency", "missing: the number of clients");
        const auto& a = t.synthetic.arrival;
        if (t.mode == ArrivalMode::Open && a.kind != ArrivalKind::Offline) {
            if (!(a.rate > 0))
                add(v, "traffic.rate", "missing: the request rate of " + std::string(sim::name(a.kind)) + " arrivals");
            else if (a.kind == ArrivalKind::Diurnal && !(a.peak_to_trough >= 1))
                add(v, "traffic.peak_to_trough", "missing: the highest rate of a day over its lowest (>= 1)");
            else if (auto why = a.check(); !why.empty()) add(v, "traffic", why);
        }
        if (auto why = t.synthetic.prompt.check(); !why.empty()) add(v, "traffic.prompt", why);
        if (auto why = t.synthetic.output.check(); !why.empty()) add(v, "traffic.output", why);
    } else if (t.mode == ArrivalMode::Closed) {
        add(v, "traffic.trace", "a trace gives arrival times; it cannot drive a closed loop (arrival: concurrency)");
    }
    if (t.trace.empty() && t.synthetic.num_requests >= 1 && t.warmup_requests >= t.synthetic.num_requests)
        add(v, "traffic.warmup_requests",
            str(t.warmup_requests) + " warm-up requests leave none of the " + str(t.synthetic.num_requests) +
                " requests to measure (traffic.num_requests)");
    if (p.capacity.max_rate > 0 && !(p.capacity.min_rate < p.capacity.max_rate))
        add(v, "capacity.min_rate",
            "the capacity search's lowest rate (" + sim::short_number(p.capacity.min_rate) +
                " requests/s) must be below its highest (" + sim::short_number(p.capacity.max_rate) +
                ", capacity.max_rate)");
    if (t.trace.empty() && !p.slo.classes.empty())
        add(v, "slo.classes",
            "generated traffic has only the default class; classes come from a trace's slo_class column");
}

// Speculative decoding: a method with its tokens and one acceptance figure, in range, and the
// mechanisms it does not combine with.
void check_speculative(std::vector<Violation>& v, const ServingPlan& p) {
    using workloads::serving::SpecMethod;
    const auto& sp = p.speculative;
    if (sp.method == SpecMethod::None) return;  // its other keys are warned about (they change nothing)
    if (sp.tokens < 1) add(v, "serving.speculative.tokens", "missing: the draft tokens a decode verifies");
    const int given =
        (sp.acceptance >= 0 ? 1 : 0) + (sp.acceptance_length > 0 ? 1 : 0) + (sp.acceptance_profile.empty() ? 0 : 1);
    if (given != 1)
        add(v, "serving.speculative.acceptance",
            "give one of serving.speculative.acceptance (a draft's rate), acceptance_length (tokens a "
            "verification emits) and acceptance_profile (measured rates by position)");
    if (!sp.positions.empty() && sp.tokens > static_cast<int>(sp.positions.size()))
        add(v, "serving.speculative.tokens",
            str(sp.tokens) + " drafts, but acceptance profile '" + sp.acceptance_profile + "' measured " +
                str(static_cast<int64_t>(sp.positions.size())) + " positions");
    if (sp.acceptance_length > 0 && sp.tokens >= 1 && sp.acceptance_length > sp.tokens + 1)
        add(v, "serving.speculative.acceptance_length",
            "a verification of " + str(sp.tokens) + " drafts emits at most " + str(sp.tokens + 1) + " tokens");
    if ((sp.method == SpecMethod::Draft) != !sp.draft_model.empty())
        add(v, sp.method == SpecMethod::Draft ? "serving.speculative.method" : "serving.speculative.draft_model",
            "serving.speculative.draft_model goes with method draft (and only with it)");
    if (p.batching.policy == "static")
        add(v, "serving.speculative.method", "static batching runs no speculation (padding has no drafts)");
    if (p.kv.shared_prefix_attention)
        add(v, "serving.speculative.method",
            "shared-prefix attention with speculative verification is not modelled (turn one off)");
}

// Autoscaling: a target, where a cold start's weights come from and what it costs, bounds within
// the pool, and the mechanisms it does not combine with.
void check_autoscale(std::vector<Violation>& v, const hardware::ClusterSpec& c, const ServingPlan& p) {
    const auto& a = p.autoscale;
    if (!a.enabled()) return;
    const std::string k = "serving.autoscale.";
    if (p.disaggregated()) add(v, k + "policy", "autoscaling a disaggregated plan's pools is not modelled yet");
    if (!(a.target > 0)) add(v, k + "target", "missing: the policy's target a replica");
    const int64_t most = p.replica.replicas;
    if (a.min_replicas > most)
        add(v, k + "min_replicas",
            str(a.min_replicas) + " is above serving.replicas " + str(most) + " (the most the pool holds)");
    else if (a.initial() < a.min_replicas || a.initial() > most)
        add(v, k + "initial_replicas",
            str(a.initial()) + " is outside min_replicas " + str(a.min_replicas) + " .. serving.replicas " + str(most));
    if (!(a.load_bandwidth > 0)) {
        if (a.weights_from.empty())
            add(v, k + "weights_from", "missing: where a starting replica loads its weights from (or load_bandwidth)");
        else if (a.weights_from == "ssd" && !c.ssd)
            add(v, k + "weights_from", "ssd needs cluster.ssd (the nodes' drives and their read bandwidth)");
        else if (a.weights_from == "storage" && !c.storage)
            add(v, k + "weights_from", "storage needs cluster.storage (the shared file system)");
    }
    if (a.weights_from == "peer" && a.min_replicas < 1)
        add(v, k + "weights_from", "peer loads from a serving replica; with min_replicas 0 none may be left");
    if (a.engine_start_s < 0)
        add(v, k + "engine_start", "missing: the engine's start-up time (no engine preset states one)");
    if (a.graph_capture_s < 0)
        add(v, k + "graph_capture", "missing: the engine's graph compilation and capture time (no preset states one)");
    if (a.policy == "slo" && !(p.slo.ttft_s > 0) && !(p.slo.tpot_s > 0))
        add(v, k + "policy", "slo scales on latency over the SLO: it needs slo.ttft or slo.tpot");
}

// Multi-LoRA serving: a rank within the model's and the slots' widths, and the mechanisms it does
// not combine with yet.
void check_lora(std::vector<Violation>& v, const models::ModelSpec& m, const ServingPlan& p) {
    const auto& lo = p.lora;
    if (!lo.enabled()) return;  // its other keys are warned about (they change nothing)
    if (lo.rank < 1) return add(v, "serving.lora.rank", "missing: the adapters' rank r");
    if (lo.rank > m.hidden)
        add(v, "serving.lora.rank",
            "rank " + str(lo.rank) + " is above the model's hidden size " + str(m.hidden) +
                " (a low-rank adapter's r is below the widths it adapts)");
    if (lo.max_rank > 0 && lo.rank > lo.max_rank)
        add(v, "serving.lora.rank",
            "rank " + str(lo.rank) + " is above serving.lora.max_rank " + str(lo.max_rank) +
                " (the rank a GPU slot holds; vLLM refuses such an adapter): raise max_rank");
    if (m.moe_layers() > 0)
        add(v, "serving.lora.adapters",
            "LoRA on mixture-of-experts models (adapters on the experts) is not modelled yet");
    if (m.mla.enabled()) add(v, "serving.lora.adapters", "LoRA on latent attention's projections is not modelled yet");
    if (p.disaggregated())
        add(v, "serving.lora.adapters", "multi-LoRA serving with disaggregated prefill and decode is not modelled yet");
}

// An offload tier holds a KV block of every pool's GPUs at least (checked on a plan that is valid
// otherwise: the blocks' size needs a layout that divides the model).
void check_offload_tiers(std::vector<Violation>& v, const models::ModelSpec& m, const ServingPlan& p) {
    for (const workloads::serving::Pool& pool : p.pools()) {
        const double block = workloads::serving::replica_memory(m, *pool.layout, p.kernels, p.kv, p.batching, p.engine,
                                                                p.speculative, p.lora)
                                 .block_bytes;
        for (const auto& [key, bytes] : {std::pair{"serving.kv_offload", p.kv.offload_bytes},
                                         std::pair{"serving.kv_offload_ssd", p.kv.offload_ssd_bytes}})
            if (bytes > 0 && bytes < block)
                add(v, key,
                    str(static_cast<int64_t>(bytes)) + " bytes per GPU hold less than one KV block (" +
                        str(static_cast<int64_t>(block)) + " bytes on a GPU of " + pool.key + ")");
    }
    const double whole = workloads::serving::store_block_bytes(m, p.kv);
    if (p.kv.store_bytes > 0 && p.kv.store_bytes < whole)
        add(v, "serving.kv_store",
            str(static_cast<int64_t>(p.kv.store_bytes)) + " bytes hold less than one whole KV block (" +
                str(static_cast<int64_t>(whole)) + " bytes over every GPU of a replica)");
}

}  // namespace

std::vector<Violation> check_serving_plan(const models::ModelSpec& m, const hardware::ClusterSpec& c,
                                          const ServingPlan& p) {
    using workloads::serving::Pool;
    std::vector<Violation> v;
    const std::vector<Pool> pools = p.pools();
    if (p.isolate != workloads::serving::PoolIsolation::None && pools.size() == 1)
        add(v, "serving.disaggregation.isolate", "isolating one pool needs disaggregated prefill and decode pools");
    for (const Pool& pool : pools) check_pool(v, m, c, p, *pool.layout, pool.key);
    for (const Pool& pool : pools) check_moe_pool(v, m, *pool.layout, pool.key);
    if (p.gpus() > c.gpus())
        add(v, std::string(pools.back().key) + ".replicas",
            "the plan needs " + str(p.gpus()) + " GPUs (replicas x tp x pp" +
                std::string(pools.size() > 1 ? ", both pools" : "") + ") but the cluster has " + str(c.gpus()));
    check_traffic(v, p);
    if (p.kv.offload_bytes > 0 && !p.kv.prefix_caching)
        add(v, "serving.kv_offload",
            "needs serving.prefix_caching: true (the tier keeps the prefix cache's evicted blocks)");
    if (p.kv.store_bytes > 0 && !p.kv.prefix_caching)
        add(v, "serving.kv_store", "needs serving.prefix_caching: true (the store keeps the prefix cache's blocks)");
    if (p.kv.store_bytes > 0 && !(c.nic_bandwidth_per_gpu() > 0))
        add(v, "serving.kv_store", "needs a scale-out NIC (cluster.nic) to reach the store over");
    if (p.kv.offload_chunk > 0 && p.kv.offload_chunk % p.kv.block_size != 0)
        add(v, "serving.kv_offload_chunk",
            std::to_string(p.kv.offload_chunk) + " tokens is not a multiple of block_size " +
                std::to_string(p.kv.block_size));
    if (p.kv.any_tier() && p.kv.offload_copy.empty())
        add(v, "serving.kv_offload_copy",
            "missing: how the engine copies offloaded blocks back, memcpy or kernel (no engine preset states it)");
    if (p.kv.any_tier() && p.kv.offload_load.empty())
        add(v, "serving.kv_offload_load",
            "missing: when the engine loads offloaded blocks, blocking, layerwise or async (no engine preset states "
            "it)");
    if (p.kv.any_tier() && p.kv.offload_copy == "memcpy" && !(c.pcie.copy_latency > 0))
        add(v, "serving.kv_offload_copy",
            "memcpy needs the host link's measured copy_latency (" + c.pcie.id + " states none); kernel does not");
    if (p.kv.offload_ssd_bytes > 0 && !(p.kv.offload_bytes > 0))
        add(v, "serving.kv_offload_ssd", "needs serving.kv_offload (the NVMe tier keeps what host memory drops)");
    if (p.kv.offload_ssd_bytes > 0 && !c.ssd)
        add(v, "serving.kv_offload_ssd", "needs cluster.ssd (the nodes' drives and their read bandwidth)");
    if (p.kv.shared_prefix_attention && !p.kv.prefix_caching)
        add(v, "serving.shared_prefix_attention",
            "needs serving.prefix_caching: true (the shared prefix is read from its one cached copy)");
    if (p.batching.max_model_len == 0 && m.max_seq_len == 0)
        add(v, "serving.max_model_len", "missing: the model states no context length");
    check_speculative(v, p);
    check_lora(v, m, p);
    check_autoscale(v, c, p);
    if (v.empty()) check_offload_tiers(v, m, p);
    return v;
}

}  // namespace fathom::plans

namespace fathom::plans {

double replay_task_estimate(const models::ModelSpec& model, const workloads::TrainingPlan& plan) {
    const double microbatches = static_cast<double>(plan.training.global_batch) /
                                (static_cast<double>(plan.layout.dp) * static_cast<double>(plan.training.micro_batch));
    return 12.0 * microbatches * static_cast<double>(model.layers + 2);
}

std::vector<Violation> check_replay_size(const models::ModelSpec& model, const workloads::TrainingPlan& plan,
                                         int64_t max_tasks) {
    const double tasks = replay_task_estimate(model, plan);
    if (tasks <= static_cast<double>(max_tasks)) return {};
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "the step's replay would hold about %.3g tasks (%.3g micro-batches x (%lld layers + embedding and "
                  "head) x 12), above the limit of "
                  "%.3g (about 170 bytes each; raise it with --max-tasks)",
                  tasks, tasks / 12.0 / static_cast<double>(model.layers + 2), static_cast<long long>(model.layers),
                  static_cast<double>(max_tasks));
    return {{"training.global_batch_size", buf}};
}

}  // namespace fathom::plans
