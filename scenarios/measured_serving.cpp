// Serving cases of a measured-format file: the case's model, devices, engine and workload become a
// serving plan; the engine's preset (workloads/engines/) supplies what the source leaves out, and
// each remaining gap is filled by a rule listed as an assumption. Metrics are computed under the
// source's own conventions: a GenAI-Perf / AIPerf "ITL" is a per-request average (fathom's tpot),
// vLLM's and SGLang's ITL is per gap; static-batch latency is the time to finish the batch.
#include <algorithm>
#include <cmath>

#include "plans/catalog.h"
#include "plans/evaluate.h"
#include "scenarios/measured_case.h"
#include "sim/error.h"

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

}  // namespace

CompareResult predict_serving_case(const YAML::Node& c, const plans::EvaluationContext& ctx, CompareResult out) {
    const plans::Catalog& cat = *ctx.catalog;
    const YAML::Node hw = c["hardware"], cl = c["cluster"], sv = c["serving"], prec = c["precision"];
    const YAML::Node w = sv["workload"];
    if (has(sv, "disaggregation")) throw Unsupported{"disaggregated cases measured per pool are not compared yet"};
    if (opt_str(sv, "ep", "1") != "1") throw Unsupported{"expert parallelism is not modelled yet"};
    const models::ModelSpec model = case_model(c["model"], out.assumptions);
    const std::string accel = case_accelerator(hw, cat, out);
    const std::string arrival = w["arrival"].as<std::string>();
    if (arrival == "trace") throw Unsupported{"trace-driven cases are not replayed (the trace is not in the file)"};
    if (!has(w, "input_len") || !has(w, "output_len"))
        throw Unsupported{"request lengths come from a dataset (" + opt_str(w, "dataset", "unnamed") + ") the case does not give"};

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
    if (!preset && engine == "other" && lower(opt_str(sv, "software")).find("nim") != std::string::npos) {
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
    if (!sv["tp"]) throw Unsupported{"the case does not give the tensor-parallel degree"};
    p.replica.tp = positive_int(sv, "serving", "tp");
    p.replica.pp = sv["pp"] ? positive_int(sv, "serving", "pp") : 1;
    p.replica.replicas = sv["dp"] ? positive_int(sv, "serving", "dp") : std::max(1, gpus / (p.replica.tp * p.replica.pp));
    p.replica.accelerator = cluster.accelerator;
    const std::string dtype = opt_str(prec, "dtype", "bf16");
    p.kernels.gemm_dtype = dtype == "fp8" ? hardware::Dtype::fp8 : hardware::Dtype::bf16;
    if (dtype != "fp8" && dtype != "bf16" && dtype != "fp16") throw Unsupported{"precision '" + dtype + "' is not modelled"};
    if (has(prec, "kv_cache")) {
        const std::string kv = opt_str(prec, "kv_cache");
        p.kv.dtype = kv == "fp8" || kv == "int8" ? hardware::Dtype::fp8 : hardware::Dtype::bf16;
        p.kernels.kv_dtype = p.kv.dtype;
    }
    if (has(sv, "max_num_seqs")) p.batching.max_num_seqs = sv["max_num_seqs"].as<int64_t>();
    if (has(sv, "max_num_batched_tokens")) p.batching.max_num_batched_tokens = sv["max_num_batched_tokens"].as<int64_t>();
    if (has(sv, "gpu_memory_fraction")) p.kv.gpu_memory_utilization = sv["gpu_memory_fraction"].as<double>();
    if (has(sv, "prefix_cache")) p.kv.prefix_caching = sv["prefix_cache"].as<bool>();
    if (has(sv, "chunked_prefill") && !sv["chunked_prefill"].as<bool>() && engine == "vllm") p.batching.policy = "vllm";
    const int64_t in_len = w["input_len"].as<int64_t>(), out_len = w["output_len"].as<int64_t>();
    p.batching.max_model_len = has(sv, "max_model_len") ? sv["max_model_len"].as<int64_t>() : in_len + out_len;
    auto& t = p.traffic;
    auto& syn = t.synthetic;
    syn.prompt.kind = syn.output.kind = workloads::serving::LengthKind::Fixed;
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
        const int64_t b = w["batch_size"].as<int64_t>();
        p.batching.policy = "static";
        p.batching.max_num_seqs = b;
        p.batching.max_num_batched_tokens = std::max(p.batching.max_num_batched_tokens, b * in_len);
        syn.arrival.kind = ArrivalKind::Offline;
        syn.num_requests = b * p.replica.replicas;
        p.router = "round-robin";
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
        syn.num_requests = has(w, "num_requests") ? w["num_requests"].as<int64_t>()
                                                  : std::max<int64_t>(500, static_cast<int64_t>(syn.arrival.rate * 600));
    } else {
        throw Unsupported{"arrival '" + arrival + "' is not modelled"};
    }
    p.router = p.router.empty() ? "round-robin" : p.router;

    const plans::Outcome o = plans::evaluate_serving(model, cluster, p, ctx, 1);
    if (!o.ok()) throw Unsupported{"the plan cannot run: " + plans::describe(o.violations)};
    const ServingReport& r = *o.serving();
    const std::string metric = out.metric, statistic = opt_str(c, "statistic", "single"), scope = opt_str(c, "scope", "system");
    const double per = scope == "per_gpu" ? p.gpus() : scope == "per_replica" ? p.replica.replicas : 1;
    // Static batches: throughput over the time the batches ran (all requests arrive at 0).
    if (metric == "output_tokens_per_s") out.predicted = r.output_tokens_per_s / per;
    else if (metric == "total_tokens_per_s") out.predicted = r.total_tokens_per_s / per;
    else if (metric == "input_tokens_per_s") out.predicted = r.input_tokens_per_s / per;
    else if (metric == "requests_per_s" || metric == "scheduled_requests_per_s") out.predicted = r.requests_per_s / per;
    else if (metric == "ttft_ms") out.predicted = 1e3 * pick(r.ttft_s, statistic);
    else if (metric == "tpot_ms") out.predicted = 1e3 * pick(r.tpot_s, statistic);
    else if (metric == "itl_ms") {
        const bool per_request = tool.find("genai-perf") != std::string::npos || tool.find("aiperf") != std::string::npos;
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
