// The serving, traffic, slo and capacity keys of a serving scenario (ServingPlan), declared once:
// the parser, --set, `fathom keys` and the plan hash all read this table.
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "plans/length_keys.h"
#include "sim/error.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/formats.h"
#include "workloads/serving/kv_tier.h"
#include "workloads/serving/router.h"

namespace fathom::plans {

// serving_mechanism_keys.cpp
void add_lora_keys(std::vector<Key<workloads::serving::ServingPlan>>& k);
void add_autoscale_keys(std::vector<Key<workloads::serving::ServingPlan>>& k);

namespace {

using hardware::Dtype;
using models::MoeDispatcher;
using namespace workloads::serving;
using SK = Key<ServingPlan>;
using namespace key_decl;

// traffic.arrival: the generator's arrival kinds, then the sources that replace it.
std::vector<std::string> arrival_choices() {
    auto out = sim::choices<ArrivalKind>();
    out.insert(out.end(), {"concurrency", "trace"});
    return out;
}

// The accessors of a member of the synthetic traffic generator.
template <auto... Path>
SK::Access synthetic() {
    return member<&ServingPlan::traffic, &TrafficPlan::synthetic, Path...>();
}

// The keys of one pool of replicas at the member `Pool` of the plan (the aggregated replicas, or a
// disaggregated pool, created when one of its keys is set).
template <auto Pool>
void add_pool_keys(std::vector<SK>& k, const std::string& prefix, bool aggregated) {
    k.push_back(
        {Decl(prefix + ".tp", KeyType::Integer, "tensor-parallel degree of one replica").range(1).by_default("1"),
         member<Pool, &PoolLayout::tp>()});
    k.push_back({Decl(prefix + ".pp", KeyType::Integer, "pipeline stages of one replica").range(1).by_default("1"),
                 member<Pool, &PoolLayout::pp>()});
    k.push_back({Decl(prefix + ".replicas", KeyType::Integer, "independent replicas (engine instances)")
                     .range(1)
                     .by_default(aggregated ? "GPUs / (tp x pp)" : "1"),
                 member<Pool, &PoolLayout::replicas>()});
    k.push_back({Decl(prefix + ".ep", KeyType::Integer,
                      "expert-parallel degree: the MoE layers of ep GPUs (tp = pp = 1, data-parallel attention) "
                      "exchange tokens; 1: experts split over each replica's tp")
                     .range(1)
                     .by_default("1"),
                 member<Pool, &PoolLayout::ep>()});
    k.push_back({Decl(prefix + ".redundant_experts", KeyType::Integer,
                      "extra expert copies spread over the EP group (EPLB), (experts + these) / ep per GPU")
                     .range(0)
                     .by_default("0"),
                 member<Pool, &PoolLayout::redundant_experts>()});
    k.push_back({Decl(prefix + ".dispatcher", KeyType::Choice,
                      "MoE token dispatcher under ep > 1: alltoall (every token-expert pair), deepep (DeepEP normal: "
                      "once per destination node, then NVLink), deepep_ll (DeepEP low-latency: every pair, direct)")
                     .choices_of<MoeDispatcher>()
                     .by_default("alltoall"),
                 member<Pool, &PoolLayout::dispatcher>()});
    k.push_back({Decl(prefix + ".accelerator", KeyType::Text, "accelerator catalog id of this pool's devices")
                     .by_default("the cluster's"),
                 member<Pool, &PoolLayout::accelerator_id>()});
}

// Declarative table: serving.disaggregation.isolate and the engine, batching and KV-cache keys.
void add_engine_keys(std::vector<SK>& k) {
    k.push_back({Decl("serving.disaggregation.isolate", KeyType::Choice,
                      "simulate one pool alone, the other unlimited: prefill (requests end with their first token) or "
                      "decode (requests arrive with their prompt's KV in place); none: both pools")
                     .choices_of<PoolIsolation>()
                     .by_default("none"),
                 member<&ServingPlan::isolate>()});
    k.push_back({Decl("serving.two_batch_overlap", KeyType::Boolean,
                      "run each iteration as two halves, one's expert all-to-all beside the other's compute (SGLang "
                      "--enable-two-batch-overlap)"),
                 member<&ServingPlan::engine, &EngineSettings::two_batch_overlap>()});
    k.push_back({Decl("serving.num_scheduler_steps", KeyType::Integer,
                      "multi-step scheduling (vLLM V0 --num-scheduler-steps): decode-only batches run this many "
                      "iterations per scheduling round, admitting nothing until it ends, with the engine's CPU time "
                      "per iteration paid once a round")
                     .range(1, 64),
                 member<&ServingPlan::engine, &EngineSettings::scheduler_steps>()});
    k.push_back({Decl("serving.custom_allreduce", KeyType::Boolean,
                      "single-node tensor-parallel all-reduces run the engine's peer-memory kernel (vLLM/SGLang/"
                      "TensorRT-LLM custom all-reduce) where the fabric has one calibrated and it is faster than "
                      "NCCL's; false: NCCL's algorithms only"),
                 member<&ServingPlan::engine, &EngineSettings::custom_allreduce>()});
    k.push_back({Decl("serving.expert_load", KeyType::Number,
                      "MoE under ep > 1: the busiest GPU's routed tokens over the mean (1: balanced, as EPLB aims for)")
                     .range(1, 64),
                 member<&ServingPlan::expert_load>()});
    k.push_back({Decl("serving.engine", KeyType::Text,
                      "serving-engine preset applied first (workloads/engines/, `fathom list engines`): CPU overheads, "
                      "defaults of the batching and KV keys")
                     .by_default("none (fathom's defaults)"),
                 member<&ServingPlan::engine, &EngineSettings::preset>()});
    k.push_back({Decl("serving.dtype", KeyType::Choice,
                      "weight and GEMM format (workloads/serving/formats.h): bf16, fp16; fp8 and int8 (W8A8: weights "
                      "and GEMMs in 8 bits); fp4 (W4A4 NVFP4/MXFP4); w8a16 and w4a16 (weight-only: 8- or 4-bit "
                      "weights dequantized to 16 bits in the kernel, Marlin/Machete)")
                     .choices(workloads::serving::format_names()),
                 [](ServingPlan& p, const KeyValue& v) {
                     workloads::serving::apply_format(*workloads::serving::find_format(to_str(v)), p.kernels);
                 },
                 [](const ServingPlan& p) -> KeyValue { return workloads::serving::format_name(p.kernels); }});
    k.push_back({Decl("serving.gqa_kv_sharing", KeyType::Boolean,
                      "decode attention reads each KV head once for its group of query heads (XQA, FlashInfer, "
                      "FlashAttention); false: once per query head (TensorRT-LLM's masked MHA before 0.7.1)")
                     .by_default("true"),
                 member<&ServingPlan::kernels, &models::KernelStack::gqa_shared_kv>()});
    // The cache's dtype is also the one attention kernels read.
    k.push_back(
        {Decl("serving.kv_dtype", KeyType::Choice, "KV-cache dtype").choices(serving_dtype_choices()),
         [](ServingPlan& p, const KeyValue& v) { p.kv.dtype = p.kernels.kv_dtype = sim::parse<Dtype>(to_str(v)); },
         member<&ServingPlan::kv, &KvSettings::dtype>().get});
    k.push_back({Decl("serving.policy", KeyType::Choice, "batching policy (`fathom list policies`)")
                     .choices(registry_names(workloads::serving::policy_registry())),
                 member<&ServingPlan::batching, &BatchingSettings::policy>()});
    k.push_back({Decl("serving.max_num_seqs", KeyType::Integer, "running sequences per replica at most").range(1),
                 member<&ServingPlan::batching, &BatchingSettings::max_num_seqs>()});
    k.push_back({Decl("serving.max_num_batched_tokens", KeyType::Integer,
                      "tokens per iteration at most (the chunked-prefill token budget)")
                     .range(1),
                 member<&ServingPlan::batching, &BatchingSettings::max_num_batched_tokens>()});
    k.push_back(
        {Decl("serving.chunk_size", KeyType::Integer, "splitfuse: prompt tokens of one request per iteration at most")
             .range(1),
         member<&ServingPlan::batching, &BatchingSettings::chunk_size>()});
    k.push_back({Decl("serving.max_model_len", KeyType::Integer, "longest prompt + output a replica admits")
                     .range(1)
                     .by_default("the model's max_seq_len"),
                 member<&ServingPlan::batching, &BatchingSettings::max_model_len>()});
    k.push_back({Decl("serving.block_size", KeyType::Integer, "tokens per paged KV block").range(1, 65536),
                 member<&ServingPlan::kv, &KvSettings::block_size>()});
    k.push_back({Decl("serving.gpu_memory_utilization", KeyType::Number,
                      "share of device memory the engine may use (vLLM gpu_memory_utilization)")
                     .range(0.01, 1),
                 member<&ServingPlan::kv, &KvSettings::gpu_memory_utilization>()});
    k.push_back(
        {Decl("serving.memory_fraction_of", KeyType::Choice,
              "what gpu_memory_utilization is a share of: the device (vLLM) or the memory free after "
              "weights, activations and runtime (TensorRT-LLM free_gpu_memory_fraction), all KV")
             .choices({"device", "free"}),
         [](ServingPlan& p, const KeyValue& v) { p.kv.fraction_of_free = to_str(v) == "free"; },
         [](const ServingPlan& p) -> KeyValue { return std::string(p.kv.fraction_of_free ? "free" : "device"); }});
    k.push_back({Decl("serving.watermark", KeyType::Number, "share of KV blocks kept free when admitting requests")
                     .range(0, 0.5),
                 member<&ServingPlan::kv, &KvSettings::watermark>()});
    k.push_back({Decl("serving.preemption", KeyType::Choice,
                      "when KV runs out: recompute (drop and prefill again) or swap (to host memory over PCIe)")
                     .choices_of<Preemption>(),
                 member<&ServingPlan::kv, &KvSettings::preemption>()});
    k.push_back({Decl("serving.prefix_caching", KeyType::Boolean, "reuse cached KV blocks of shared prompt prefixes"),
                 member<&ServingPlan::kv, &KvSettings::prefix_caching>()});
    k.push_back({Decl("serving.kv_offload", KeyType::Quantity,
                      "KV offloading (vLLM's CPU offloading, LMCache, SGLang HiCache): host memory per GPU that "
                      "keeps the blocks the prefix cache evicts, loaded back over the host link (cluster.pcie, or "
                      "the accelerator's host link) when a prompt continues with them; needs prefix_caching")
                     .unit(sim::Dimension::Bytes)
                     .range(0, 1e15),
                 member<&ServingPlan::kv, &KvSettings::offload_bytes>()});
    k.push_back({Decl("serving.kv_offload_ssd", KeyType::Quantity,
                      "KV offloading's NVMe tier below host memory (LMCache's local disk): bytes per GPU of the "
                      "nodes' SSDs (cluster.ssd) keeping the blocks host memory drops, loaded back at the drives' "
                      "read bandwidth shared by the node's GPUs; needs kv_offload")
                     .unit(sim::Dimension::Bytes)
                     .range(0, 1e16),
                 member<&ServingPlan::kv, &KvSettings::offload_ssd_bytes>()});
    k.push_back({Decl("serving.kv_store", KeyType::Quantity,
                      "a KV store shared by every replica over the network (LMCache's server, Mooncake's store): "
                      "bytes in all, keeping the blocks any replica computes; a prompt continuing with blocks held "
                      "there loads them over its GPUs' scale-out NICs (cluster.nic); needs prefix_caching")
                     .unit(sim::Dimension::Bytes)
                     .range(0, 1e18),
                 member<&ServingPlan::kv, &KvSettings::store_bytes>()});
    k.push_back({Decl("serving.kv_offload_copy", KeyType::Choice,
                      "how KV offloading copies blocks back to the GPU: memcpy (one copy per block, layer and K or "
                      "V, each paying the host link's copy_latency: vLLM's OffloadingConnector) or kernel (one "
                      "kernel reading host memory: LMCache, SGLang HiCache)")
                     .choices(workloads::serving::kv_copy_methods())
                     .by_default("the engine preset's; required with kv_offload or kv_store otherwise"),
                 member<&ServingPlan::kv, &KvSettings::offload_copy>()});
    k.push_back({Decl("serving.kv_offload_load", KeyType::Choice,
                      "when KV offloading's loads run: blocking (before the iteration that admits the request: "
                      "LMCache), layerwise (beside it, each layer waiting for its blocks: SGLang HiCache) or async "
                      "(on a copy stream while iterations go on without the request: vLLM's OffloadingConnector)")
                     .choices(workloads::serving::kv_load_modes())
                     .by_default("the engine preset's; required with kv_offload or kv_store otherwise"),
                 member<&ServingPlan::kv, &KvSettings::offload_load>()});
    k.push_back({Decl("serving.kv_offload_chunk", KeyType::Integer,
                      "tokens a KV tier loads as one unit, from the prompt's start (LMCache's chunk_size); a "
                      "multiple of block_size")
                     .range(1)
                     .by_default("a block"),
                 member<&ServingPlan::kv, &KvSettings::offload_chunk>()});
    k.push_back({Decl("serving.kv_offload_store", KeyType::Choice,
                      "how KV offloading's stores run: async (beside the iterations: vLLM's OffloadingConnector, "
                      "SGLang) or blocking (each iteration's new blocks copied to host memory before the next: "
                      "LMCache)")
                     .choices(workloads::serving::kv_store_modes())
                     .by_default("async"),
                 member<&ServingPlan::kv, &KvSettings::offload_store>()});
    k.push_back({Decl("serving.kv_offload_store_decode", KeyType::Boolean,
                      "the KV tiers keep blocks of generated tokens too (LMCache's save_decode_cache: false)")
                     .by_default("true"),
                 member<&ServingPlan::kv, &KvSettings::offload_store_decode>()});
    k.push_back({Decl("serving.shared_prefix_attention", KeyType::Boolean,
                      "decode attention reads a prefix shared by several sequences of a batch once (Hydragen, "
                      "RelayAttention); needs prefix_caching"),
                 member<&ServingPlan::kv, &KvSettings::shared_prefix_attention>()});
    k.push_back({Decl("serving.reserve_output", KeyType::Boolean,
                      "admission reserves KV for prompt + output tokens (TensorRT-LLM GUARANTEED_NO_EVICT): no "
                      "preemption, fewer sequences admitted"),
                 member<&ServingPlan::kv, &KvSettings::reserve_output>()});
    using workloads::serving::SpecMethod;
    using workloads::serving::SpeculativeSettings;
    k.push_back({Decl("serving.speculative.method", KeyType::Choice,
                      "speculative decoding's drafter: draft (a smaller model, speculative.draft_model), eagle (an "
                      "EAGLE/EAGLE-3 head), mtp (a multi-token-prediction module), ngram (prompt lookup, no GPU "
                      "time); none: off")
                     .choices_of<SpecMethod>(),
                 member<&ServingPlan::speculative, &SpeculativeSettings::method>()});
    k.push_back({Decl("serving.speculative.tokens", KeyType::Integer,
                      "draft tokens a decode verifies each iteration (vLLM num_speculative_tokens, SGLang "
                      "speculative-num-steps with topk 1)")
                     .range(1, 15)
                     .by_default("required with a method"),
                 member<&ServingPlan::speculative, &SpeculativeSettings::tokens>()});
    k.push_back({Decl("serving.speculative.acceptance", KeyType::Number,
                      "a draft token's acceptance given the drafts before it were accepted (the i.i.d. model: "
                      "(1 - a^(k+1)) / (1 - a) tokens a verification); or give acceptance_length")
                     .range(0, 1)
                     .by_default("one of acceptance and acceptance_length is required with a method"),
                 member<&ServingPlan::speculative, &SpeculativeSettings::acceptance>()});
    k.push_back({Decl("serving.speculative.acceptance_length", KeyType::Number,
                      "the mean tokens a verification emits as a source publishes it (1 to tokens + 1; EAGLE's "
                      "average acceptance length tau), which fixes acceptance")
                     .range(1, 16)
                     .by_default("one of acceptance and acceptance_length is required with a method"),
                 member<&ServingPlan::speculative, &SpeculativeSettings::acceptance_length>()});
    k.push_back({Decl("serving.speculative.acceptance_profile", KeyType::Text,
                      "or a measured acceptance by draft position (`fathom list acceptance`: a drafter, target and "
                      "dataset, workloads/acceptance/); tokens at most its positions")
                     .by_default("one of acceptance, acceptance_length and acceptance_profile is required with a "
                                 "method"),
                 member<&ServingPlan::speculative, &SpeculativeSettings::acceptance_profile>()});
    k.push_back({Decl("serving.speculative.draft_model", KeyType::Text,
                      "method draft: the drafter, a catalog model id (`fathom list models`), at the replica's TP")
                     .by_default("required with method draft"),
                 member<&ServingPlan::speculative, &SpeculativeSettings::draft_model>()});
    k.push_back({Decl("serving.speculative.iteration_overhead", KeyType::Quantity,
                      "the engine's time around the drafter once an iteration speculates (rejection sampling, "
                      "bookkeeping; engine presets)")
                     .unit(sim::Dimension::Time)
                     .range(0, 1),
                 member<&ServingPlan::speculative, &SpeculativeSettings::iteration_overhead_s>()});
    k.push_back({Decl("serving.speculative.step_overhead", KeyType::Quantity,
                      "the engine's time around each draft step (launches, sampling; engine presets)")
                     .unit(sim::Dimension::Time)
                     .range(0, 1),
                 member<&ServingPlan::speculative, &SpeculativeSettings::step_overhead_s>()});
    k.push_back(
        {Decl("serving.router", KeyType::Choice, "how requests are spread over replicas (`fathom list routers`)")
             .choices(registry_names(workloads::serving::router_registry())),
         member<&ServingPlan::router>()});
    k.push_back(
        {Decl("serving.iteration_overhead", KeyType::Quantity, "engine CPU time per iteration (scheduling, launch)")
             .unit(sim::Dimension::Time)
             .range(0, 10),
         member<&ServingPlan::engine, &EngineSettings::iteration_overhead_s>()});
    k.push_back(
        {Decl("serving.per_sequence_overhead", KeyType::Quantity, "engine CPU time per running sequence per iteration")
             .unit(sim::Dimension::Time)
             .range(0, 1),
         member<&ServingPlan::engine, &EngineSettings::per_sequence_overhead_s>()});
    k.push_back({Decl("serving.runtime_reserved", KeyType::Quantity,
                      "device memory the engine keeps outside weights, activations and KV (CUDA context, NCCL, graphs)")
                     .unit(sim::Dimension::Bytes)
                     .range(0),
                 member<&ServingPlan::engine, &EngineSettings::runtime_reserved_bytes>()});
}

// Declarative table: the traffic.* keys.
// Diurnal arrivals' day (workloads/serving/traffic/traffic.h).
void add_diurnal_keys(std::vector<SK>& k) {
    k.push_back({Decl("traffic.peak_to_trough", KeyType::Number,
                      "diurnal: the highest request rate of a period over its lowest (traffic.rate is the mean)")
                     .range(1, 1e6)
                     .by_default("required for diurnal"),
                 synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::peak_to_trough>()});
    k.push_back({Decl("traffic.period", KeyType::Quantity, "diurnal: the length of the cycle (a day)")
                     .unit(sim::Dimension::Time)
                     .range(1e-6)
                     .by_default("24 h"),
                 synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::period_s>()});
    k.push_back({Decl("traffic.peak_at", KeyType::Quantity, "diurnal: when the rate peaks, from the start")
                     .unit(sim::Dimension::Time)
                     .range(0)
                     .by_default("half the period"),
                 synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::peak_s>()});
}

void add_traffic_keys(std::vector<SK>& k) {
    k.push_back({Decl("traffic.arrival", KeyType::Choice,
                      "offline (all at time 0), poisson, gamma (cv), bursty (on/off), constant, diurnal (a Poisson "
                      "rate that follows the day: peak_to_trough, period, peak_at), concurrency (closed loop), trace "
                      "(a file)")
                     .choices(arrival_choices())
                     .required(),
                 // Computed: the arrival kinds of the generator, and two sources that replace its times
                 // (closed-loop clients, a trace file), which leave it offline.
                 [](ServingPlan& p, const KeyValue& v) {
                     const std::string& a = to_str(v);
                     auto& t = p.traffic;
                     t.mode = a == "concurrency" ? ArrivalMode::Closed : ArrivalMode::Open;
                     const auto kind = sim::lookup<ArrivalKind>(a);
                     t.synthetic.arrival.kind = kind ? *kind : ArrivalKind::Offline;
                     if (a == "trace" && t.trace.empty()) t.trace = "?";
                 },
                 [](const ServingPlan& p) -> KeyValue {
                     if (!p.traffic.trace.empty()) return std::string("trace");
                     if (p.traffic.mode == ArrivalMode::Closed) return std::string("concurrency");
                     return std::string(sim::name(p.traffic.synthetic.arrival.kind));
                 }});
    k.push_back({Decl("traffic.rate", KeyType::Number,
                      "requests/s (poisson, gamma, constant; bursty: while on; diurnal: the mean)")
                     .range(1e-9)
                     .by_default("required for those arrivals"),
                 synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::rate>()});
    k.push_back({Decl("traffic.cv", KeyType::Number, "gamma: coefficient of variation of the gaps").range(1e-3, 100),
                 synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::cv>()});
    k.push_back({Decl("traffic.on", KeyType::Quantity, "bursty: mean on period").unit(sim::Dimension::Time).range(1e-9),
                 synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::on_s>()});
    k.push_back(
        {Decl("traffic.off", KeyType::Quantity, "bursty: mean off period").unit(sim::Dimension::Time).range(1e-9),
         synthetic<&SyntheticTraffic::arrival, &ArrivalProcess::off_s>()});
    add_diurnal_keys(k);
    k.push_back({Decl("traffic.concurrency", KeyType::Integer, "concurrency: closed-loop clients")
                     .range(1)
                     .by_default("required for concurrency"),
                 member<&ServingPlan::traffic, &TrafficPlan::concurrency>()});
    k.push_back(
        {Decl("traffic.think_time", KeyType::Quantity, "concurrency: pause between a reply and the next request")
             .unit(sim::Dimension::Time)
             .range(0),
         member<&ServingPlan::traffic, &TrafficPlan::think_time_s>()});
    k.push_back({Decl("traffic.num_requests", KeyType::Integer, "requests generated")
                     .range(1, 1e12)
                     .by_default("required unless trace"),
                 synthetic<&SyntheticTraffic::num_requests>()});
    k.push_back(
        {Decl("traffic.warmup_requests", KeyType::Integer, "first requests left out of the metrics (their load counts)")
             .range(0),
         member<&ServingPlan::traffic, &TrafficPlan::warmup_requests>()});
    k.push_back({Decl("traffic.trace", KeyType::Text,
                      "trace: a .csv or .jsonl file (relative to the scenario) with arrival_s, prompt_tokens, "
                      "output_tokens and optional prefix_group, prefix_tokens, session, session_tokens, slo_class, "
                      "adapter (serving.lora)")
                     .by_default("none"),
                 member<&ServingPlan::traffic, &TrafficPlan::trace>()});
    k.push_back({Decl("traffic.dataset", KeyType::Text,
                      "prompt and output lengths from a benchmark dataset of the catalog (workloads/datasets/, "
                      "`fathom list datasets`); traffic.prompt or traffic.output given as well replaces that one")
                     .by_default("none"),
                 member<&ServingPlan::traffic, &TrafficPlan::dataset>()});
    add_length_keys<&ServingPlan::traffic, &TrafficPlan::synthetic, &SyntheticTraffic::prompt>(k, "traffic.prompt");
    add_length_keys<&ServingPlan::traffic, &TrafficPlan::synthetic, &SyntheticTraffic::output>(k, "traffic.output");
    k.push_back({Decl("traffic.shared_prefix.groups", KeyType::Integer, "distinct shared prefixes").range(1).required(),
                 synthetic<&SyntheticTraffic::shared_prefix, &SharedPrefix::groups>()});
    k.push_back(
        {Decl("traffic.shared_prefix.tokens", KeyType::Integer, "tokens of each shared prefix (added to the prompt)")
             .range(1)
             .required(),
         synthetic<&SyntheticTraffic::shared_prefix, &SharedPrefix::prefix_tokens>()});
}

// traffic.sessions: multi-turn conversations.
void add_session_keys(std::vector<SK>& k) {
    k.push_back({Decl("traffic.sessions.turns", KeyType::Integer,
                      "turns per conversation; each turn's prompt carries the whole history")
                     .range(2)
                     .required(),
                 synthetic<&SyntheticTraffic::sessions, &Sessions::turns>()});
    k.push_back({Decl("traffic.sessions.concurrent", KeyType::Integer,
                      "conversations open at a time (open loop; in a closed loop each client holds one)")
                     .range(1),
                 synthetic<&SyntheticTraffic::sessions, &Sessions::concurrent>()});
    k.push_back({Decl("traffic.sessions.turns_max", KeyType::Integer,
                      "turns per conversation uniform from sessions.turns to this, drawn as it opens")
                     .range(2)
                     .by_default("sessions.turns"),
                 synthetic<&SyntheticTraffic::sessions, &Sessions::turns_max>()});
    k.push_back({Decl("traffic.sessions.conversations", KeyType::Integer,
                      "conversations in all; the traffic ends when one more would open (vLLM's multi-turn "
                      "benchmark stops when its first client finds none left)")
                     .range(1)
                     .by_default("unlimited (traffic.num_requests ends it)"),
                 synthetic<&SyntheticTraffic::sessions, &Sessions::conversations>()});
    k.push_back({Decl("traffic.sessions.first_prompt_scaled", KeyType::Boolean,
                      "draw every conversation's first turn up front and scale the draws to first_prompt's mean "
                      "(vLLM's multi-turn generator; needs sessions.conversations)")
                     .by_default("false"),
                 synthetic<&SyntheticTraffic::sessions, &Sessions::first_prompt_scaled>()});
    add_length_keys<&ServingPlan::traffic, &TrafficPlan::synthetic, &SyntheticTraffic::sessions,
                    &Sessions::first_prompt>(k, "traffic.sessions.first_prompt");
}

void add_slo_keys(std::vector<SK>& k) {
    k.push_back({Decl("slo.ttft", KeyType::Quantity, "time to first token a request must meet (queueing included)")
                     .unit(sim::Dimension::Time)
                     .range(0)
                     .by_default("none"),
                 member<&ServingPlan::slo, &SloSettings::ttft_s>()});
    k.push_back({Decl("slo.tpot", KeyType::Quantity, "time per output token a request must meet (first token excluded)")
                     .unit(sim::Dimension::Time)
                     .range(0)
                     .by_default("none"),
                 member<&ServingPlan::slo, &SloSettings::tpot_s>()});
    k.push_back(
        {Decl("slo.target", KeyType::Number, "capacity: share of requests that must meet both SLOs").range(0.01, 1),
         member<&ServingPlan::slo, &SloSettings::target_attainment>()});
    k.push_back({Decl("capacity.min_rate", KeyType::Number, "lowest request rate tried, requests/s").range(1e-6),
                 member<&ServingPlan::capacity, &CapacitySettings::min_rate>()});
    k.push_back({Decl("capacity.max_rate", KeyType::Number, "highest request rate tried, requests/s")
                     .range(1e-6)
                     .by_default("2 x the offline throughput"),
                 member<&ServingPlan::capacity, &CapacitySettings::max_rate>()});
    k.push_back({Decl("capacity.seeds", KeyType::Integer, "seeds simulated at each rate (the spread is reported)")
                     .range(1, 100),
                 member<&ServingPlan::capacity, &CapacitySettings::seeds>()});
    k.push_back(
        {Decl("capacity.tolerance", KeyType::Number, "relative width of the final rate bracket").range(1e-4, 0.5),
         member<&ServingPlan::capacity, &CapacitySettings::tolerance>()});
}

}  // namespace

const std::vector<Key<ServingPlan>>& serving_plan_keys() {
    static const std::vector<SK> keys = finish<ServingPlan>([] {
        std::vector<SK> k;
        add_pool_keys<&ServingPlan::replica>(k, "serving", true);
        add_pool_keys<&ServingPlan::prefill>(k, "serving.disaggregation.prefill", false);
        add_pool_keys<&ServingPlan::decode>(k, "serving.disaggregation.decode", false);
        add_engine_keys(k);
        add_lora_keys(k);
        add_autoscale_keys(k);
        add_traffic_keys(k);
        add_session_keys(k);
        add_slo_keys(k);
        return k;
    }());
    return keys;
}

void set_serving_key(ServingPlan& plan, const std::string& path, const KeyValue& value) {
    set_key(serving_plan_keys(), plan, path, value, "serving-plan");
}

std::vector<std::pair<std::string, KeyValue>> changed_serving_keys(const ServingPlan& base, const ServingPlan& plan) {
    return key_decl::changed_keys(serving_plan_keys(), base, plan);
}

KeyValue get_serving_key(const ServingPlan& plan, const std::string& path) {
    return get_key(serving_plan_keys(), plan, path, "serving-plan");
}

}  // namespace fathom::plans
