// The serving, traffic, slo and capacity keys of a serving scenario (ServingPlan), declared once:
// the parser, --set, `fathom keys` and the plan hash all read this table.
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "plans/length_keys.h"
#include "sim/error.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/router.h"

namespace fathom::plans {
namespace {

using workloads::serving::ServingPlan;
using SK = Key<ServingPlan>;
using namespace key_decl;

models::MoeDispatcher parse_dispatcher(const std::string& s) {
    if (s == "deepep") return models::MoeDispatcher::DeepEp;
    if (s == "deepep_ll") return models::MoeDispatcher::DeepEpLowLatency;
    return models::MoeDispatcher::AllToAll;
}

}  // namespace

const std::vector<Key<ServingPlan>>& serving_plan_keys() {
    using workloads::LengthDistribution;
    using workloads::LengthKind;
    using workloads::serving::PoolLayout;
    static const std::vector<SK> keys = [] {
        std::vector<SK> k;
        // Pools: the setters are written out per pool (function pointers cannot capture).
#define FATHOM_POOL_KEYS(PREFIX, POOL, AGG)                                                                            \
    k.push_back(                                                                                                       \
        {Decl(PREFIX ".tp", KeyType::Integer, "tensor-parallel degree of one replica").range(1).by_default("1"),       \
         [](ServingPlan& p, const KeyValue& v) { POOL.tp = to_int32(v); },                                             \
         [](const ServingPlan& p) -> KeyValue { return int64_t{POOL.tp}; }});                                          \
    k.push_back({Decl(PREFIX ".pp", KeyType::Integer, "pipeline stages of one replica").range(1).by_default("1"),      \
                 [](ServingPlan& p, const KeyValue& v) { POOL.pp = to_int32(v); },                                     \
                 [](const ServingPlan& p) -> KeyValue { return int64_t{POOL.pp}; }});                                  \
    k.push_back({Decl(PREFIX ".replicas", KeyType::Integer, "independent replicas (engine instances)")                 \
                     .range(1)                                                                                         \
                     .by_default(AGG ? "GPUs / (tp x pp)" : "1"),                                                      \
                 [](ServingPlan& p, const KeyValue& v) { POOL.replicas = to_int32(v); },                               \
                 [](const ServingPlan& p) -> KeyValue { return int64_t{POOL.replicas}; }});                            \
    k.push_back({Decl(PREFIX ".ep", KeyType::Integer,                                                                  \
                      "expert-parallel degree: the MoE layers of ep GPUs (tp = pp = 1, data-parallel attention) "      \
                      "exchange tokens; 1: experts split over each replica's tp")                                      \
                     .range(1)                                                                                         \
                     .by_default("1"),                                                                                 \
                 [](ServingPlan& p, const KeyValue& v) { POOL.ep = to_int32(v); },                                     \
                 [](const ServingPlan& p) -> KeyValue { return int64_t{POOL.ep}; }});                                  \
    k.push_back({Decl(PREFIX ".redundant_experts", KeyType::Integer,                                                   \
                      "extra expert copies spread over the EP group (EPLB), (experts + these) / ep per GPU")           \
                     .range(0)                                                                                         \
                     .by_default("0"),                                                                                 \
                 [](ServingPlan& p, const KeyValue& v) { POOL.redundant_experts = to_int32(v); },                      \
                 [](const ServingPlan& p) -> KeyValue { return int64_t{POOL.redundant_experts}; }});                   \
    k.push_back(                                                                                                       \
        {Decl(PREFIX ".dispatcher", KeyType::Choice,                                                                   \
              "MoE token dispatcher under ep > 1: alltoall (every token-expert pair), deepep (DeepEP normal: "         \
              "once per destination node, then NVLink), deepep_ll (DeepEP low-latency: every pair, direct)")           \
             .choices({"alltoall", "deepep", "deepep_ll"})                                                             \
             .by_default("alltoall"),                                                                                  \
         [](ServingPlan& p, const KeyValue& v) { POOL.dispatcher = parse_dispatcher(to_str(v)); },                     \
         [](const ServingPlan& p) -> KeyValue { return std::string(models::moe_dispatcher_name(POOL.dispatcher)); }}); \
    k.push_back({Decl(PREFIX ".accelerator", KeyType::Text, "accelerator catalog id of this pool's devices")           \
                     .by_default("the cluster's"),                                                                     \
                 [](ServingPlan& p, const KeyValue& v) { POOL.accelerator_id = to_str(v); },                           \
                 [](const ServingPlan& p) -> KeyValue { return POOL.accelerator_id; }});
        FATHOM_POOL_KEYS("serving", p.replica, true)
        FATHOM_POOL_KEYS("serving.disaggregation.prefill", (*p.prefill), false)
        FATHOM_POOL_KEYS("serving.disaggregation.decode", (*p.decode), false)
#undef FATHOM_POOL_KEYS
        k.push_back(
            {Decl("serving.disaggregation.isolate", KeyType::Choice,
                  "simulate one pool alone, the other unlimited: prefill (requests end with their first token) or "
                  "decode (requests arrive with their prompt's KV in place); none: both pools")
                 .choices({"none", "prefill", "decode"})
                 .by_default("none"),
             [](ServingPlan& p, const KeyValue& v) {
                 const std::string x = to_str(v);
                 p.isolate = x == "prefill"  ? workloads::serving::PoolIsolation::Prefill
                             : x == "decode" ? workloads::serving::PoolIsolation::Decode
                                             : workloads::serving::PoolIsolation::None;
             },
             [](const ServingPlan& p) -> KeyValue {
                 return std::string(workloads::serving::pool_isolation_name(p.isolate));
             }});
        k.push_back(
            {Decl("serving.two_batch_overlap", KeyType::Boolean,
                  "run each iteration as two halves, one's expert all-to-all beside the other's compute (SGLang "
                  "--enable-two-batch-overlap)"),
             [](ServingPlan& p, const KeyValue& v) { p.engine.two_batch_overlap = to_bool(v); },
             [](const ServingPlan& p) -> KeyValue { return p.engine.two_batch_overlap; }});
        k.push_back(
            {Decl("serving.expert_load", KeyType::Number,
                  "MoE under ep > 1: the busiest GPU's routed tokens over the mean (1: balanced, as EPLB aims for)")
                 .range(1, 64),
             [](ServingPlan& p, const KeyValue& v) { p.expert_load = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.expert_load; }});
        k.push_back(
            {Decl("serving.engine", KeyType::Text,
                  "serving-engine preset applied first (workloads/engines/, `fathom list engines`): CPU overheads, "
                  "defaults of the batching and KV keys")
                 .by_default("none (fathom's defaults)"),
             [](ServingPlan& p, const KeyValue& v) { p.engine.preset = to_str(v); },
             [](const ServingPlan& p) -> KeyValue { return p.engine.preset; }});
        k.push_back(
            {Decl("serving.dtype", KeyType::Choice, "weight and GEMM dtype (fp8: fp8 weights and GEMMs)")
                 .choices({"bf16", "fp16", "fp8"}),
             [](ServingPlan& p, const KeyValue& v) { p.kernels.gemm_dtype = *hardware::parse_dtype(to_str(v)); },
             [](const ServingPlan& p) -> KeyValue { return std::string(hardware::dtype_name(p.kernels.gemm_dtype)); }});
        k.push_back({Decl("serving.kv_dtype", KeyType::Choice, "KV-cache dtype").choices({"bf16", "fp16", "fp8"}),
                     [](ServingPlan& p, const KeyValue& v) {
                         p.kv.dtype = *hardware::parse_dtype(to_str(v));
                         p.kernels.kv_dtype = p.kv.dtype;
                     },
                     [](const ServingPlan& p) -> KeyValue { return std::string(hardware::dtype_name(p.kv.dtype)); }});
        k.push_back({Decl("serving.policy", KeyType::Choice, "batching policy (`fathom list policies`)")
                         .choices(registry_names(workloads::serving::policy_registry())),
                     [](ServingPlan& p, const KeyValue& v) { p.batching.policy = to_str(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.batching.policy; }});
        k.push_back({Decl("serving.max_num_seqs", KeyType::Integer, "running sequences per replica at most").range(1),
                     [](ServingPlan& p, const KeyValue& v) { p.batching.max_num_seqs = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.batching.max_num_seqs; }});
        k.push_back({Decl("serving.max_num_batched_tokens", KeyType::Integer,
                          "tokens per iteration at most (the chunked-prefill token budget)")
                         .range(1),
                     [](ServingPlan& p, const KeyValue& v) { p.batching.max_num_batched_tokens = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.batching.max_num_batched_tokens; }});
        k.push_back({Decl("serving.chunk_size", KeyType::Integer,
                          "splitfuse: prompt tokens of one request per iteration at most")
                         .range(1),
                     [](ServingPlan& p, const KeyValue& v) { p.batching.chunk_size = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.batching.chunk_size; }});
        k.push_back({Decl("serving.max_model_len", KeyType::Integer, "longest prompt + output a replica admits")
                         .range(1)
                         .by_default("the model's max_seq_len"),
                     [](ServingPlan& p, const KeyValue& v) { p.batching.max_model_len = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.batching.max_model_len; }});
        k.push_back({Decl("serving.block_size", KeyType::Integer, "tokens per paged KV block").range(1, 65536),
                     [](ServingPlan& p, const KeyValue& v) { p.kv.block_size = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.kv.block_size; }});
        k.push_back({Decl("serving.gpu_memory_utilization", KeyType::Number,
                          "share of device memory the engine may use (vLLM gpu_memory_utilization)")
                         .range(0.01, 1),
                     [](ServingPlan& p, const KeyValue& v) { p.kv.gpu_memory_utilization = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.kv.gpu_memory_utilization; }});
        k.push_back(
            {Decl("serving.memory_fraction_of", KeyType::Choice,
                  "what gpu_memory_utilization is a share of: the device (vLLM) or the memory free after "
                  "weights, activations and runtime (TensorRT-LLM free_gpu_memory_fraction), all KV")
                 .choices({"device", "free"}),
             [](ServingPlan& p, const KeyValue& v) { p.kv.fraction_of_free = to_str(v) == "free"; },
             [](const ServingPlan& p) -> KeyValue { return std::string(p.kv.fraction_of_free ? "free" : "device"); }});
        k.push_back({Decl("serving.watermark", KeyType::Number, "share of KV blocks kept free when admitting requests")
                         .range(0, 0.5),
                     [](ServingPlan& p, const KeyValue& v) { p.kv.watermark = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.kv.watermark; }});
        k.push_back({Decl("serving.preemption", KeyType::Choice,
                          "when KV runs out: recompute (drop and prefill again) or swap (to host memory over PCIe)")
                         .choices({"recompute", "swap"}),
                     [](ServingPlan& p, const KeyValue& v) {
                         p.kv.preemption = to_str(v) == "swap" ? workloads::serving::Preemption::Swap
                                                               : workloads::serving::Preemption::Recompute;
                     },
                     [](const ServingPlan& p) -> KeyValue {
                         return std::string(workloads::serving::preemption_name(p.kv.preemption));
                     }});
        k.push_back(
            {Decl("serving.prefix_caching", KeyType::Boolean, "reuse cached KV blocks of shared prompt prefixes"),
             [](ServingPlan& p, const KeyValue& v) { p.kv.prefix_caching = to_bool(v); },
             [](const ServingPlan& p) -> KeyValue { return p.kv.prefix_caching; }});
        k.push_back({Decl("serving.shared_prefix_attention", KeyType::Boolean,
                          "decode attention reads a prefix shared by several sequences of a batch once (Hydragen, "
                          "RelayAttention); needs prefix_caching"),
                     [](ServingPlan& p, const KeyValue& v) { p.kv.shared_prefix_attention = to_bool(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.kv.shared_prefix_attention; }});
        k.push_back({Decl("serving.reserve_output", KeyType::Boolean,
                          "admission reserves KV for prompt + output tokens (TensorRT-LLM GUARANTEED_NO_EVICT): no "
                          "preemption, fewer sequences admitted"),
                     [](ServingPlan& p, const KeyValue& v) { p.kv.reserve_output = to_bool(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.kv.reserve_output; }});
        k.push_back(
            {Decl("serving.router", KeyType::Choice, "how requests are spread over replicas (`fathom list routers`)")
                 .choices(registry_names(workloads::serving::router_registry())),
             [](ServingPlan& p, const KeyValue& v) { p.router = to_str(v); },
             [](const ServingPlan& p) -> KeyValue { return p.router; }});
        k.push_back(
            {Decl("serving.iteration_overhead", KeyType::Quantity, "engine CPU time per iteration (scheduling, launch)")
                 .unit(sim::Dimension::Time)
                 .range(0, 10),
             [](ServingPlan& p, const KeyValue& v) { p.engine.iteration_overhead_s = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.engine.iteration_overhead_s; }});
        k.push_back({Decl("serving.per_sequence_overhead", KeyType::Quantity,
                          "engine CPU time per running sequence per iteration")
                         .unit(sim::Dimension::Time)
                         .range(0, 1),
                     [](ServingPlan& p, const KeyValue& v) { p.engine.per_sequence_overhead_s = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.engine.per_sequence_overhead_s; }});
        k.push_back(
            {Decl("serving.runtime_reserved", KeyType::Quantity,
                  "device memory the engine keeps outside weights, activations and KV (CUDA context, NCCL, graphs)")
                 .unit(sim::Dimension::Bytes)
                 .range(0),
             [](ServingPlan& p, const KeyValue& v) { p.engine.runtime_reserved_bytes = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.engine.runtime_reserved_bytes; }});

        // Traffic.
        k.push_back(
            {Decl("traffic.arrival", KeyType::Choice,
                  "offline (all at time 0), poisson, gamma (cv), bursty (on/off), constant, concurrency (closed "
                  "loop), trace (a file)")
                 .choices({"offline", "poisson", "gamma", "bursty", "constant", "concurrency", "trace"})
                 .required(),
             [](ServingPlan& p, const KeyValue& v) {
                 using workloads::serving::ArrivalKind;
                 const std::string& a = to_str(v);
                 auto& t = p.traffic;
                 t.mode = a == "concurrency" ? workloads::serving::ArrivalMode::Closed
                                             : workloads::serving::ArrivalMode::Open;
                 t.synthetic.arrival.kind = a == "poisson"    ? ArrivalKind::Poisson
                                            : a == "gamma"    ? ArrivalKind::Gamma
                                            : a == "bursty"   ? ArrivalKind::Bursty
                                            : a == "constant" ? ArrivalKind::Constant
                                                              : ArrivalKind::Offline;
                 if (a == "trace" && t.trace.empty()) t.trace = "?";
             },
             [](const ServingPlan& p) -> KeyValue {
                 if (!p.traffic.trace.empty()) return std::string("trace");
                 if (p.traffic.mode == workloads::serving::ArrivalMode::Closed) return std::string("concurrency");
                 return std::string(workloads::serving::arrival_kind_name(p.traffic.synthetic.arrival.kind));
             }});
        k.push_back({Decl("traffic.rate", KeyType::Number, "requests/s (poisson, gamma, constant; bursty: while on)")
                         .range(1e-9)
                         .by_default("required for those arrivals"),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.arrival.rate = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.arrival.rate; }});
        k.push_back(
            {Decl("traffic.cv", KeyType::Number, "gamma: coefficient of variation of the gaps").range(1e-3, 100),
             [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.arrival.cv = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.arrival.cv; }});
        k.push_back(
            {Decl("traffic.on", KeyType::Quantity, "bursty: mean on period").unit(sim::Dimension::Time).range(1e-9),
             [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.arrival.on_s = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.arrival.on_s; }});
        k.push_back(
            {Decl("traffic.off", KeyType::Quantity, "bursty: mean off period").unit(sim::Dimension::Time).range(1e-9),
             [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.arrival.off_s = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.arrival.off_s; }});
        k.push_back({Decl("traffic.concurrency", KeyType::Integer, "concurrency: closed-loop clients")
                         .range(1)
                         .by_default("required for concurrency"),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.concurrency = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.concurrency; }});
        k.push_back(
            {Decl("traffic.think_time", KeyType::Quantity, "concurrency: pause between a reply and the next request")
                 .unit(sim::Dimension::Time)
                 .range(0),
             [](ServingPlan& p, const KeyValue& v) { p.traffic.think_time_s = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.traffic.think_time_s; }});
        k.push_back({Decl("traffic.num_requests", KeyType::Integer, "requests generated")
                         .range(1, 1e12)
                         .by_default("required unless trace"),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.num_requests = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.num_requests; }});
        k.push_back({Decl("traffic.warmup_requests", KeyType::Integer,
                          "first requests left out of the metrics (their load counts)")
                         .range(0),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.warmup_requests = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.warmup_requests; }});
        k.push_back({Decl("traffic.trace", KeyType::Text,
                          "trace: a .csv or .jsonl file (relative to the scenario) with arrival_s, prompt_tokens, "
                          "output_tokens and optional prefix_group, prefix_tokens, session, session_tokens, slo_class")
                         .by_default("none"),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.trace = to_str(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.trace; }});
        FATHOM_LENGTH_KEYS(k, ServingPlan, "traffic.prompt", p.traffic.synthetic.prompt)
        FATHOM_LENGTH_KEYS(k, ServingPlan, "traffic.output", p.traffic.synthetic.output)
        k.push_back(
            {Decl("traffic.shared_prefix.groups", KeyType::Integer, "distinct shared prefixes").range(1).required(),
             [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.shared_prefix.groups = to_int(v); },
             [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.shared_prefix.groups; }});
        k.push_back(
            {Decl("traffic.shared_prefix.tokens", KeyType::Integer,
                  "tokens of each shared prefix (added to the prompt)")
                 .range(1)
                 .required(),
             [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.shared_prefix.prefix_tokens = to_int(v); },
             [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.shared_prefix.prefix_tokens; }});
        k.push_back({Decl("traffic.sessions.turns", KeyType::Integer,
                          "turns per conversation; each turn's prompt carries the whole history")
                         .range(2)
                         .required(),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.sessions.turns = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.sessions.turns; }});
        k.push_back({Decl("traffic.sessions.concurrent", KeyType::Integer, "conversations open at a time").range(1),
                     [](ServingPlan& p, const KeyValue& v) { p.traffic.synthetic.sessions.concurrent = to_int(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.traffic.synthetic.sessions.concurrent; }});

        // SLOs and capacity.
        k.push_back({Decl("slo.ttft", KeyType::Quantity, "time to first token a request must meet (queueing included)")
                         .unit(sim::Dimension::Time)
                         .range(0)
                         .by_default("none"),
                     [](ServingPlan& p, const KeyValue& v) { p.slo.ttft_s = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.slo.ttft_s; }});
        k.push_back(
            {Decl("slo.tpot", KeyType::Quantity, "time per output token a request must meet (first token excluded)")
                 .unit(sim::Dimension::Time)
                 .range(0)
                 .by_default("none"),
             [](ServingPlan& p, const KeyValue& v) { p.slo.tpot_s = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.slo.tpot_s; }});
        k.push_back(
            {Decl("slo.target", KeyType::Number, "capacity: share of requests that must meet both SLOs").range(0.01, 1),
             [](ServingPlan& p, const KeyValue& v) { p.slo.target_attainment = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.slo.target_attainment; }});
        k.push_back({Decl("capacity.min_rate", KeyType::Number, "lowest request rate tried, requests/s").range(1e-6),
                     [](ServingPlan& p, const KeyValue& v) { p.capacity.min_rate = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.capacity.min_rate; }});
        k.push_back({Decl("capacity.max_rate", KeyType::Number, "highest request rate tried, requests/s")
                         .range(1e-6)
                         .by_default("2 x the offline throughput"),
                     [](ServingPlan& p, const KeyValue& v) { p.capacity.max_rate = to_double(v); },
                     [](const ServingPlan& p) -> KeyValue { return p.capacity.max_rate; }});
        k.push_back({Decl("capacity.seeds", KeyType::Integer, "seeds simulated at each rate (the spread is reported)")
                         .range(1, 100),
                     [](ServingPlan& p, const KeyValue& v) { p.capacity.seeds = to_int32(v); },
                     [](const ServingPlan& p) -> KeyValue { return int64_t{p.capacity.seeds}; }});
        k.push_back(
            {Decl("capacity.tolerance", KeyType::Number, "relative width of the final rate bracket").range(1e-4, 0.5),
             [](ServingPlan& p, const KeyValue& v) { p.capacity.tolerance = to_double(v); },
             [](const ServingPlan& p) -> KeyValue { return p.capacity.tolerance; }});
        // Defaults shown from a default plan where the declaration did not give one; pool keys of
        // the disaggregated pools read through optionals that a default plan lacks, so they all
        // carry explicit defaults above.
        for (auto& key : k) {
            if (!key.info.default_text.empty()) continue;
            ServingPlan d;
            const KeyValue v = key.get(d);
            key.info.default_text = key.info.type == KeyType::Quantity
                                        ? format_quantity(std::get<double>(v), key.info.unit)
                                        : format_value(v);
        }
        return k;
    }();
    return keys;
}

void set_serving_key(ServingPlan& plan, const std::string& path, const KeyValue& value) {
    for (const auto& k : serving_plan_keys()) {
        if (k.info.path != path) continue;
        const std::string why = check_value(k.info, value);
        if (!why.empty()) throw sim::InputError(why, "", 0, path);
        if (path.rfind("serving.disaggregation.prefill.", 0) == 0 && !plan.prefill) plan.prefill.emplace();
        if (path.rfind("serving.disaggregation.decode.", 0) == 0 && !plan.decode) plan.decode.emplace();
        k.set(plan, value);
        return;
    }
    throw sim::InputError("unknown serving-plan key", "", 0, path);
}

KeyValue get_serving_key(const ServingPlan& plan, const std::string& path) {
    for (const auto& k : serving_plan_keys())
        if (k.info.path == path) return k.get(plan);
    throw sim::InputError("unknown serving-plan key", "", 0, path);
}

}  // namespace fathom::plans
