// Serving cases of a measured-format file: the case's model, devices, engine and workload become a
// serving plan; the engine's preset (workloads/engines/) supplies what the source leaves out, and
// each remaining gap is filled by a rule listed as an assumption. Metrics are computed under the
// source's own conventions: a GenAI-Perf / AIPerf "ITL" is a per-request average (fathom's tpot),
// vLLM's and SGLang's ITL is per gap; static-batch latency is the time to finish the batch.
#include "plans/catalog.h"
#include "plans/evaluate.h"
#include "scenarios/measured_case.h"
#include "sim/error.h"

#include <algorithm>
#include <cmath>

namespace fathom::scenarios::detail {
namespace {

using workloads::serving::ArrivalKind;
using workloads::serving::ArrivalMode;
using workloads::serving::Percentiles;
using workloads::serving::ServingPlan;
using workloads::serving::ServingReport;

double pick(const Percentiles& p, const std::string& statistic) {
    if (statistic == "median") return p.p50;
    if (statistic == "p90") return p.p90;
    if (statistic == "p95") return p.p95;
    if (statistic == "p99") return p.p99;
    if (statistic == "max") return p.max;
    return p.mean;  // mean, single (one aggregate figure)
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return s;
}

// One pool's layout as the case gives it (`serving` itself, or a pool of `serving.disaggregation`):
// tp x pp per replica, dp replicas (all of the pool's GPUs when dp is omitted), and ep. With
// ep > tp the dp ranks are the data-parallel attention ranks of one engine whose MoE layers are
// expert-parallel over ep GPUs (measured-format.md `serving.dp`).
workloads::serving::PoolLayout case_pool(const YAML::Node& n, const std::string& where, int gpus, CompareResult& out) {
    workloads::serving::PoolLayout l;
    if (!n["tp"]) throw Unsupported{"the case does not give the tensor-parallel degree"};
    l.tp = positive_int(n, where, "tp");
    l.pp = n["pp"] ? positive_int(n, where, "pp") : 1;
    l.replicas = n["dp"] ? positive_int(n, where, "dp") : std::max(1, gpus / (l.tp * l.pp));
    l.ep = n["ep"] ? positive_int(n, where, "ep") : 1;
    if (l.ep > 1 && l.ep == l.tp) {
        l.ep = 1;  // experts inside each replica's TP group: split over it as the engine's fused MoE does
        out.assumptions.push_back("ep = tp: experts split over each replica's tensor-parallel group");
    }
    return l;
}

// What the software description says of large-scale expert parallelism (the format has no field
// for these): DeepEP, whose SGLang mode "auto" (server_args.py deepep_mode) runs the normal
// kernels for prefill batches and the low-latency ones for decode batches; two-batch overlap.
void expert_parallel_engine(const YAML::Node& sv, workloads::serving::PoolLayout& pool, bool decode,
                            workloads::serving::ServingPlan& p, int64_t experts, CompareResult& out) {
    const std::string sw = lower(opt_str(sv, "software"));
    if (sw.find("deepep") != std::string::npos) {
        pool.dispatcher = decode ? models::MoeDispatcher::DeepEpLowLatency : models::MoeDispatcher::DeepEp;
        out.assumptions.push_back(std::string("DeepEP ") + (decode ? "low-latency" : "normal") +
                                  " dispatch (software description; SGLang deepep_mode auto)");
    } else {
        out.assumptions.push_back("token dispatcher alltoall (the software description names none)");
    }
    if (sw.find("two-batch overlap") != std::string::npos) {
        p.engine.two_batch_overlap = true;
        out.assumptions.push_back("two-batch overlap (software description)");
    }
    const int64_t extra = (pool.ep - experts % pool.ep) % pool.ep;
    if (extra > 0) {
        pool.redundant_experts = static_cast<int>(extra);
        out.assumptions.push_back("EPLB: " + std::to_string(extra) + " redundant experts, the fewest that spread the " +
                                  std::to_string(experts) + " experts evenly over ep " + std::to_string(pool.ep));
    }
    out.assumptions.push_back("balanced expert load (EPLB's placement; serving.expert_load 1)");
}

}  // namespace

CompareResult predict_serving_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out) {
    const plans::Catalog& cat = *ctx.catalog;
    const YAML::Node hw = c["hardware"], cl = c["cluster"], sv = c["serving"], prec = c["precision"];
    const YAML::Node w = sv["workload"];
    for (const auto& note : c["notes"])
        if (note.IsScalar() &&
            note.as<std::string>().find("cannot be reproduced from its typed configuration") != std::string::npos)
            throw Unsupported{"its notes say it cannot be reproduced from its typed configuration"};
    std::string measured_pool;  // disaggregated: the pool the case measured alone
    if (has(sv, "disaggregation")) {
        measured_pool = opt_str(sv["disaggregation"], "measured", "both");
        if (measured_pool != "prefill" && measured_pool != "decode")
            throw Unsupported{"disaggregated cases measured as a whole system are not compared yet"};
        if (!has(sv["disaggregation"], measured_pool.c_str()))
            throw Unsupported{"the measured pool's layout is not given"};
    }
    const models::ModelSpec model = case_model(c["model"], out.assumptions);
    const std::string accel = case_accelerator(hw, cat, out);
    const std::string arrival = w["arrival"].as<std::string>();
    if (arrival == "trace") throw Unsupported{"trace-driven cases are not replayed (the trace is not in the file)"};
    if (!has(w, "input_len") || (!has(w, "output_len") && measured_pool.empty()))
        throw Unsupported{"request lengths come from a dataset (" + opt_str(w, "dataset", "unnamed") +
                          ") the case does not give"};

    plans::ClusterRequest req;
    req.accelerator = accel;
    req.gpus_per_node = cl["gpus_per_node"] ? positive_int(cl, "cluster", "gpus_per_node") : 8;
    const int gpus = positive_int(cl, "cluster", "gpus");
    req.nodes = std::max(1, (gpus + req.gpus_per_node - 1) / req.gpus_per_node);
    if (gpus < req.gpus_per_node && req.nodes == 1) req.gpus_per_node = std::max(gpus, 1);
    const hardware::ClusterSpec cluster = plans::build_cluster(req, cat);

    ServingPlan p;
    const std::string engine = opt_str(sv, "engine", "other");
    const plans::StackPreset* preset = cat.engine_for(engine);
    const bool nim = !preset && engine == "other" && lower(opt_str(sv, "software")).find("nim") != std::string::npos;
    if (nim) {
        // NVIDIA NIM's optimized LLM profiles ("fp8 TP2") run TensorRT-LLM engines.
        preset = cat.engine_for("tensorrt-llm");
        out.assumptions.push_back("NIM profile served by TensorRT-LLM");
    }
    if (preset) {
        preset->apply(p);
        out.stack = preset->id;
    } else {
        out.stack = "defaults";
        out.assumptions.push_back("engine '" + engine + "' has no preset: fathom's defaults");
    }
    workloads::serving::PoolLayout* pool = &p.replica;
    if (measured_pool.empty()) {
        p.replica = case_pool(sv, "serving", gpus, out);
    } else {
        // The measured pool alone (serving.disaggregation.isolate); the other pool is not simulated.
        const std::string where = "serving.disaggregation." + measured_pool;
        const YAML::Node pn = sv["disaggregation"][measured_pool];
        const int pool_gpus = pn["gpus"] ? positive_int(pn, where, "gpus") : gpus;
        p.prefill = p.decode = case_pool(pn, where, pool_gpus, out);
        const bool decode = measured_pool == "decode";
        p.isolate = decode ? workloads::serving::PoolIsolation::Decode : workloads::serving::PoolIsolation::Prefill;
        pool = decode ? &*p.decode : &*p.prefill;
        out.assumptions.push_back("the " + measured_pool + " pool measured alone, the other one unlimited");
    }
    if (pool->ep > 1) {
        if (!model.moe.enabled()) throw Unsupported{"ep > 1 on a dense model"};
        expert_parallel_engine(sv, *pool, p.isolate == workloads::serving::PoolIsolation::Decode, p,
                               model.moe.num_experts, out);
    }
    pool->accelerator = cluster.accelerator;
    if (p.disaggregated()) {
        p.prefill->accelerator = p.decode->accelerator = cluster.accelerator;
        (p.isolate == workloads::serving::PoolIsolation::Decode ? *p.prefill : *p.decode) = *pool;
    }
    const std::string dtype = opt_str(prec, "dtype", "bf16");
    p.kernels.gemm_dtype = dtype == "fp8" ? hardware::Dtype::fp8 : hardware::Dtype::bf16;
    if (dtype != "fp8" && dtype != "bf16" && dtype != "fp16")
        throw Unsupported{"precision '" + dtype + "' is not modelled"};
    if (has(prec, "kv_cache")) {
        const std::string kv = opt_str(prec, "kv_cache");
        p.kv.dtype = kv == "fp8" || kv == "int8" ? hardware::Dtype::fp8 : hardware::Dtype::bf16;
        p.kernels.kv_dtype = p.kv.dtype;
    } else if (dtype == "fp8" && nim) {
        // NIM's fp8 profiles are TensorRT-LLM engines built from TensorRT Model Optimizer fp8
        // checkpoints, whose post-training quantization quantizes the KV cache to fp8 unless told
        // otherwise (NVIDIA/TensorRT-Model-Optimizer examples/llm_ptq/hf_ptq.py and
        // multinode_ptq.py: --kv_cache_qformat default "fp8"). The NIM 1.8 Llama 3.3 70B fp8 TP2
        // sweep agrees: from concurrency 100 on it decodes ~85 sequences at once (920 tokens/s x
        // 93 ms ITL), each holding over 5000 tokens, which needs ~70 GB of fp8 KV cache but ~139 GB
        // in bf16, more than the ~89 GB that 2 x 80 GB leave beside 70 GB of fp8 weights.
        p.kv.dtype = p.kernels.kv_dtype = hardware::Dtype::fp8;
        out.assumptions.push_back(
            "fp8 KV cache (NIM fp8 profiles: Model Optimizer's fp8 checkpoints quantize it by default)");
    }
    if (has(sv, "max_num_seqs")) p.batching.max_num_seqs = sv["max_num_seqs"].as<int64_t>();
    if (has(sv, "max_num_batched_tokens"))
        p.batching.max_num_batched_tokens = sv["max_num_batched_tokens"].as<int64_t>();
    if (has(sv, "gpu_memory_fraction")) p.kv.gpu_memory_utilization = sv["gpu_memory_fraction"].as<double>();
    if (has(sv, "prefix_cache")) p.kv.prefix_caching = sv["prefix_cache"].as<bool>();
    if (has(sv, "chunked_prefill") && !sv["chunked_prefill"].as<bool>() && engine == "vllm") p.batching.policy = "vllm";
    const int64_t in_len = w["input_len"].as<int64_t>();
    int64_t out_len = 0;
    if (has(w, "output_len")) {
        out_len = w["output_len"].as<int64_t>();
    } else if (measured_pool == "prefill") {
        out_len = 1;  // the prefill pool ends every request at its first token
    } else {
        // A decode pool's throughput at a context of input_len barely depends on how long it runs.
        out_len = 100;
        out.assumptions.push_back("output length not given: 100 tokens decoded per request");
    }
    p.batching.max_model_len = has(sv, "max_model_len") ? sv["max_model_len"].as<int64_t>() : in_len + out_len;
    auto& t = p.traffic;
    auto& syn = t.synthetic;
    syn.prompt.kind = syn.output.kind = workloads::LengthKind::Fixed;
    syn.prompt.value = in_len;
    syn.output.value = out_len;
    if (has(w, "shared_prefix")) {
        const YAML::Node sp = w["shared_prefix"];
        syn.shared_prefix.groups = sp["groups"].as<int64_t>();
        syn.shared_prefix.prefix_tokens = sp["prefix_len"].as<int64_t>();
        syn.prompt.value = in_len - syn.shared_prefix.prefix_tokens;  // the generator adds the prefix
        out.assumptions.push_back("shared prefixes cached; repeats of whole prompts within a group not modelled");
    }
    const std::string tool = lower(opt_str(sv, "benchmark_tool"));
    bool static_batch = false;
    if (arrival == "static_batch") {
        static_batch = true;
        if (!has(w, "batch_size")) throw Unsupported{"a static batch without its size"};
        int64_t b = w["batch_size"].as<int64_t>();
        syn.arrival.kind = ArrivalKind::Offline;
        p.router = "round-robin";
        if (!measured_pool.empty() || pool->ep > 1) {
            // One engine's batch over its data-parallel attention ranks (or a pool's over its
            // replicas), dealt round-robin: batch_size / replicas each.
            syn.num_requests = b;
            b = (b + pool->replicas - 1) / pool->replicas;
            out.assumptions.push_back("static batch of " + std::to_string(syn.num_requests) + " dealt over the " +
                                      std::to_string(pool->replicas) + " data-parallel ranks (" + std::to_string(b) +
                                      " each)");
        } else {
            syn.num_requests = b * p.replica.replicas;
        }
        p.batching.max_num_seqs = b;
        const bool decode_only = p.isolate == workloads::serving::PoolIsolation::Decode;
        p.batching.max_num_batched_tokens = std::max(p.batching.max_num_batched_tokens, decode_only ? b : b * in_len);
        // A decode pool's batch runs continuously from its first decode step (its prompts are
        // prefilled elsewhere); a static policy would wait to prefill them.
        if (p.isolate != workloads::serving::PoolIsolation::Decode) p.batching.policy = "static";
    } else if (arrival == "offline") {
        syn.arrival.kind = ArrivalKind::Offline;
        syn.num_requests = has(w, "num_requests") ? w["num_requests"].as<int64_t>() : 2000;
    } else if (arrival == "concurrency") {
        t.mode = ArrivalMode::Closed;
        t.concurrency = w["concurrency"].as<int64_t>();
        // A closed loop settles after the first round of requests; measure ten rounds after one.
        syn.num_requests = has(w, "num_requests") ? w["num_requests"].as<int64_t>() : 11 * t.concurrency;
        t.warmup_requests = t.concurrency;
        out.assumptions.push_back("closed loop measured over 10 rounds after a warm-up round");
    } else if (arrival == "poisson" || arrival == "constant") {
        syn.arrival.kind = arrival == "poisson" ? ArrivalKind::Poisson : ArrivalKind::Constant;
        syn.arrival.rate = w["request_rate"].as<double>();
        syn.num_requests = has(w, "num_requests")
                               ? w["num_requests"].as<int64_t>()
                               : std::max<int64_t>(500, static_cast<int64_t>(syn.arrival.rate * 600));
    } else {
        throw Unsupported{"arrival '" + arrival + "' is not modelled"};
    }
    p.router = p.router.empty() ? "round-robin" : p.router;

    const plans::Outcome o = plans::evaluate_serving(model, cluster, p, ctx, 1);
    if (!o.ok()) throw Unsupported{"the plan cannot run: " + plans::describe(o.violations)};
    const ServingReport& r = *o.serving();
    const std::string metric = out.metric, statistic = opt_str(c, "statistic", "single"),
                      scope = opt_str(c, "scope", "system");
    const double per = scope == "per_gpu" ? p.gpus() : scope == "per_replica" ? pool->replicas : 1;
    // Static batches: throughput over the time the batches ran (all requests arrive at 0).
    if (metric == "output_tokens_per_s") out.predicted = r.output_tokens_per_s / per;
    else if (metric == "total_tokens_per_s") out.predicted = r.total_tokens_per_s / per;
    else if (metric == "input_tokens_per_s") out.predicted = r.input_tokens_per_s / per;
    else if (metric == "requests_per_s" || metric == "scheduled_requests_per_s") out.predicted = r.requests_per_s / per;
    else if (metric == "ttft_ms") out.predicted = 1e3 * pick(r.ttft_s, statistic);
    else if (metric == "tpot_ms") out.predicted = 1e3 * pick(r.tpot_s, statistic);
    else if (metric == "itl_ms") {
        const bool per_request =
            tool.find("genai-perf") != std::string::npos || tool.find("aiperf") != std::string::npos;
        out.predicted = 1e3 * pick(per_request ? r.tpot_s : r.itl_s, statistic);
        out.assumptions.push_back(per_request ? "ITL as GenAI-Perf/AIPerf count it: per request, first token excluded"
                                              : "ITL per gap between tokens");
    } else if (metric == "e2e_latency_s") {
        out.predicted = static_batch ? r.e2e_s.max : pick(r.e2e_s, statistic);
    } else {
        throw Unsupported{"metric '" + metric + "' is not predicted for serving"};
    }
    out.error = (out.predicted - out.measured) / out.measured;
    out.status = "ok";
    return out;
}

}  // namespace fathom::scenarios::detail
