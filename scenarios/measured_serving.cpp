// Serving cases of a measured-format file as serving scenarios: the case's model, devices, layout and
// workload in scenario keys; the engine's preset (workloads/engines/) for what the source leaves out;
// the engine's behaviour by the named rules of measured_rules.h; each remaining gap filled by a
// rule listed as an assumption. Metrics are computed under the source's own conventions: a
// GenAI-Perf / AIPerf "ITL" is a per-request average (fathom's tpot), vLLM's and SGLang's ITL is per
// gap; static-batch latency is the time to finish the batch.
#include "scenarios/measured_blocks.h"
#include "scenarios/measured_kinds.h"
#include "scenarios/measured_rules.h"

#include <algorithm>
#include <cstdio>

namespace fathom::scenarios::measured {
namespace {

using workloads::serving::Percentiles;
using workloads::serving::ServingPlan;

// What the case cannot be compared as: a replayed trace, lengths from a dataset the file does not
// hold, a disaggregated pool whose layout is not given, or a case whose notes say so.
void check_expressible(const Case& c, std::string& measured_pool) {
    for (const auto& note : c.raw()["notes"])
        if (note.IsScalar() &&
            note.Scalar().find("cannot be reproduced from its typed configuration") != std::string::npos)
            throw Unsupported{"its notes say it cannot be reproduced from its typed configuration"};
    if (c.has("serving.disaggregation")) {
        measured_pool = c.choice("serving.disaggregation.measured", {"prefill", "decode", "both"}, "both");
        if (measured_pool == "both") {  // the whole system: both pools' layouts are needed
            for (const char* pool : {"prefill", "decode"})
                if (!c.has(std::string("serving.disaggregation.") + pool))
                    throw Unsupported{std::string("the ") + pool + " pool's layout is not given"};
        } else if (!c.has("serving.disaggregation." + measured_pool)) {
            throw Unsupported{"the measured pool's layout is not given"};
        }
    }
}

void check_workload(const Case& c, const plans::Catalog& catalog, const std::string& measured_pool) {
    if (c.text("serving.workload.arrival") == "trace")
        throw Unsupported{"trace-driven cases are not replayed (the trace is not in the file)"};
    if (c.has("serving.workload.sessions")) return;  // multi-turn: the lengths are the sessions'
    // A named benchmark dataset without fixed lengths: its lengths from the catalog's table.
    const std::string dataset = c.peek("serving.workload.dataset");
    if (!c.has("serving.workload.input_len") && !dataset.empty() && dataset != "synthetic" && dataset != "other") {
        if (!catalog.datasets().count(dataset))
            throw Unsupported{"request lengths come from the " + dataset +
                              " dataset, which has no length table in workloads/datasets/ yet"};
        return;
    }
    const bool needs_output = measured_pool.empty() || measured_pool == "both";
    if (!c.has("serving.workload.input_len") || (!c.has("serving.workload.output_len") && needs_output))
        throw Unsupported{"request lengths come from a dataset (" + c.text("serving.workload.dataset", "unnamed") +
                          ") the case does not give"};
}

// The engine's preset for the version the case states (workloads/engines/: one per range of
// versions whose defaults differ), else its newest.
void translate_engine(ServingDraft& d, Translation& t) {
    d.engine = d.c.text("serving.engine", "other");
    d.preset = d.catalog.engine_for(d.engine);
    if (d.preset && d.c.has("serving.engine_version")) {
        const std::string version = d.c.text("serving.engine_version");
        const plans::StackPreset* p = d.catalog.engine_for(d.engine, version);
        if (!plans::compare_engine_versions(version, "0"))  // no digits: the newest, and said so
            d.assumptions.push_back("engine_version '" + version + "' is not a version number: " + d.preset->id);
        else if (p) d.preset = p;
        else d.assumptions.push_back("engine_version " + version + " has no preset of its own: " + d.preset->id);
    }
    run_rules(d, ServingStep::Engine);
    if (d.preset) d.doc.set("serving.engine", d.preset->id, "serving.engine");
    else d.assumptions.push_back("engine '" + d.engine + "' has no preset: fathom's defaults");
    t.stack = d.preset ? d.preset->id : "defaults";
}

// One pool's layout as a block of the case gives it (`serving` itself or a disaggregated pool):
// tp x pp per replica, replicas from dp (x instances) or the pool's GPUs over tp x pp, and ep (ep =
// tp: the experts split over each replica's TP group, as the engine's fused MoE does). With ep > tp
// the dp ranks are the data-parallel attention ranks of one engine whose MoE layers are
// expert-parallel over ep GPUs (measured-format.md `serving.dp`).
struct PoolShape {
    int64_t tp = 1, pp = 1, replicas = 1, ep = 1;
    std::string replicas_from;  // the case's field the replica count came from
};

PoolShape read_pool_shape(ServingDraft& d, const std::string& where, int64_t gpus) {
    const Case& c = d.c;
    PoolShape s;
    if (!c.has(where + ".tp")) throw Unsupported{"the case does not give the tensor-parallel degree of " + where};
    s.tp = c.integer(where + ".tp", "serving.tp");
    s.pp = c.has(where + ".pp") ? c.integer(where + ".pp", "serving.pp") : 1;
    const int64_t instances = c.has(where + ".instances") ? c.count(where + ".instances") : 1;
    if (c.has(where + ".dp")) {
        s.replicas = instances * c.integer(where + ".dp", "serving.replicas");
        s.replicas_from = where + ".dp";
    } else {
        s.replicas = std::max<int64_t>(1, gpus / (s.tp * s.pp));
        s.replicas_from = c.has(where + ".gpus") ? where + ".gpus" : "cluster.gpus";
    }
    s.ep = c.has(where + ".ep") ? c.integer(where + ".ep", "serving.ep") : 1;
    if (s.ep > 1 && s.ep == s.tp) {
        s.ep = 1;
        d.assumptions.push_back("ep = tp: experts split over each replica's tensor-parallel group");
    }
    return s;
}

void set_pool(ServingDraft& d, const std::string& pool, const PoolShape& s, const std::string& where) {
    d.doc.set(pool + ".tp", s.tp, where + ".tp");
    d.doc.set(pool + ".pp", s.pp, where + ".pp");
    d.doc.set(pool + ".replicas", s.replicas, s.replicas_from);
    d.doc.set(pool + ".ep", s.ep, where + ".ep");
}

// The layout: `serving` itself; or a disaggregated pool measured alone, whose layout both pools then
// run; or a whole disaggregated system, each pool as its block gives it and the requests through
// both.
void translate_pool(ServingDraft& d, int64_t cluster_gpus) {
    const Case& c = d.c;
    if (d.measured_pool == "both") {
        for (const char* name : {"prefill", "decode"}) {
            const std::string where = std::string("serving.disaggregation.") + name;
            const PoolShape s = read_pool_shape(d, where, c.count(where + ".gpus"));
            set_pool(d, where, s, where);
            d.ep = std::max(d.ep, s.ep);
            if (where == "serving.disaggregation.decode") d.replicas = s.replicas;
        }
        d.assumptions.push_back("the whole disaggregated system: prefill and decode pools as the case gives them");
    } else {
        const std::string where = d.measured_pool.empty() ? "serving" : "serving.disaggregation." + d.measured_pool;
        const int64_t gpus =
            d.measured_pool.empty() || !c.has(where + ".gpus") ? cluster_gpus : c.count(where + ".gpus");
        const PoolShape s = read_pool_shape(d, where, gpus);
        d.replicas = s.replicas;
        d.ep = s.ep;
        if (!d.measured_pool.empty()) {
            d.doc.set("serving.disaggregation.isolate", d.measured_pool, "serving.disaggregation.measured");
            d.assumptions.push_back("the " + d.measured_pool + " pool measured alone, the other one unlimited");
        }
        for (const std::string& pool : d.pools()) set_pool(d, pool, s, where);
    }
    if (d.ep > 1) {
        if (!d.model.moe.enabled()) throw Unsupported{"ep > 1 on a dense model"};
        run_rules(d, ServingStep::Experts);
    }
}

// GEMM and KV-cache dtypes, as serving formats (workloads/serving/formats.h): fp16 GEMMs are
// priced as bf16 ones (same width and tensor rate); int8 is W8A8 (w8a16 where the case's
// activations are 16-bit); int4 is weight-only w4a16 (AWQ, GPTQ); fp4 (NVFP4, MXFP4) is fp4, or on
// a device without fp4 tensor cores w4a16 (the engines' weight-only fp4 Marlin path). A one-byte KV
// cache (fp8, int8) as fp8, a 4-bit one (fp4) as fp4, any other as bf16.
void translate_precision(ServingDraft& d, Translation& t) {
    const Case& c = d.c;
    const std::vector<std::string> dtypes = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"};
    const std::string dtype = c.choice("precision.dtype", dtypes, "bf16");
    if (dtype == "fp32" || dtype == "tf32") throw Unsupported{"precision '" + dtype + "' is not modelled"};
    const std::string act = c.has("precision.activations") ? c.choice("precision.activations", dtypes, "bf16") : "";
    const bool act16 = act == "bf16" || act == "fp16";
    if (dtype == "int4" && !act.empty() && !act16) throw Unsupported{"W4A4 int4 GEMMs are not modelled"};
    std::string format = dtype == "fp16" ? "bf16" : dtype == "int4" ? "w4a16" : dtype;
    if (dtype == "int8" && act16) format = "w8a16";
    if (dtype == "fp4") {
        const auto& acc = d.catalog.accelerator(std::get<std::string>(d.doc.value("cluster.accelerator")));
        if (!acc.peak_flops.count(hardware::Dtype::fp4)) {
            format = "w4a16";
            t.fill_ins.push_back("fp4 on " + acc.id +
                                 ", which has no fp4 tensor rate: run as w4a16 (4-bit weights at its 16-bit rate)");
        }
    }
    d.doc.set("serving.dtype", format, "precision.dtype");
    if (dtype == "fp16") t.fill_ins.push_back("fp16 GEMMs priced as bf16 ones (same width and tensor-core rate)");
    if (c.has("precision.kv_cache")) {
        const std::string kv =
            c.choice("precision.kv_cache", {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4", "int4"}, "bf16");
        const bool one_byte = kv == "fp8" || kv == "int8", four_bit = kv == "fp4" || kv == "int4";
        d.doc.set("serving.kv_dtype", std::string(four_bit ? "fp4" : one_byte ? "fp8" : "bf16"), "precision.kv_cache");
        if (kv != "fp8" && kv != "bf16" && kv != "fp4")
            t.fill_ins.push_back("a " + kv + " KV cache priced as " + (four_bit ? "fp4" : one_byte ? "fp8" : "bf16"));
    }
    run_rules(d, ServingStep::Precision);
}

// The engine's scheduler settings the case states.
void translate_batching(ServingDraft& d) {
    const Case& c = d.c;
    if (c.has("serving.max_num_seqs")) d.doc.take(c, "serving.max_num_seqs", "serving.max_num_seqs");
    if (c.has("serving.max_num_batched_tokens"))
        d.doc.take(c, "serving.max_num_batched_tokens", "serving.max_num_batched_tokens");
    // The KV pool's share: of the device (vLLM gpu_memory_utilization, SGLang mem_fraction_static)
    // or of the memory left after the weights (TensorRT-LLM kv_cache_free_gpu_mem_fraction).
    if (c.has("serving.gpu_memory_fraction") && c.has("serving.kv_cache_free_memory_fraction"))
        throw Unsupported{"both gpu_memory_fraction and kv_cache_free_memory_fraction: the KV pool is one share"};
    if (c.has("serving.gpu_memory_fraction")) {
        d.doc.take(c, "serving.gpu_memory_fraction", "serving.gpu_memory_utilization");
        d.doc.set("serving.memory_fraction_of", std::string("device"), "serving.gpu_memory_fraction");
    }
    if (c.has("serving.kv_cache_free_memory_fraction")) {
        d.doc.take(c, "serving.kv_cache_free_memory_fraction", "serving.gpu_memory_utilization");
        d.doc.set("serving.memory_fraction_of", std::string("free"), "serving.kv_cache_free_memory_fraction");
    }
    if (c.has("serving.prefix_cache")) d.doc.take(c, "serving.prefix_cache", "serving.prefix_caching");
    if (c.has("serving.num_scheduler_steps"))
        d.doc.take(c, "serving.num_scheduler_steps", "serving.num_scheduler_steps");
    run_rules(d, ServingStep::Batching);
}

// Request lengths: fixed, as the case gives them; a prefill pool ends every request at its first
// token, a decode pool's throughput at a context of input_len barely depends on how long it runs.
int64_t translate_lengths(ServingDraft& d) {
    const Case& c = d.c;
    if (c.has("serving.workload.sessions")) {  // no one input length: a static batch refuses it
        translate_sessions(d);
        return 0;
    }
    if (!c.has("serving.workload.input_len")) {  // a catalog dataset (check_workload): its lengths
        const std::string dataset = c.text("serving.workload.dataset");
        const plans::DatasetSpec& ds = d.catalog.dataset(dataset);
        d.doc.set("traffic.dataset", dataset, "serving.workload.dataset");
        d.assumptions.push_back("prompt and output lengths from the " + dataset +
                                " table (workloads/datasets/), drawn independently");
        // The longest request the histograms can draw (the catalog's datasets are histograms).
        const int64_t longest = *std::max_element(ds.prompt.bins.begin(), ds.prompt.bins.end()) +
                                *std::max_element(ds.output.bins.begin(), ds.output.bins.end());
        if (c.has("serving.max_model_len")) d.doc.take(c, "serving.max_model_len", "serving.max_model_len");
        else d.doc.set("serving.max_model_len", longest, "serving.workload.dataset");
        return static_cast<int64_t>(ds.prompt.expected() + 0.5);
    }
    const int64_t in_len = c.count("serving.workload.input_len");
    int64_t out_len = 100;
    if (c.has("serving.workload.output_len")) {
        out_len = c.count("serving.workload.output_len");
    } else if (d.measured_pool == "prefill") {
        out_len = 1;
    } else {
        d.assumptions.push_back("output length not given: 100 tokens decoded per request");
    }
    if (c.has("serving.max_model_len")) d.doc.take(c, "serving.max_model_len", "serving.max_model_len");
    else d.doc.set("serving.max_model_len", in_len + out_len, "serving.workload.input_len");
    // A synthetic dataset is the fixed lengths themselves (measured-format.md `dataset`).
    if (c.peek("serving.workload.dataset") == "synthetic") c.at("serving.workload.dataset");
    int64_t prompt = in_len;
    if (c.has("serving.workload.shared_prefix")) {
        const int64_t prefix = c.count("serving.workload.shared_prefix.prefix_len");
        d.doc.take(c, "serving.workload.shared_prefix.groups", "traffic.shared_prefix.groups");
        d.doc.set("traffic.shared_prefix.tokens", prefix, "serving.workload.shared_prefix.prefix_len");
        prompt = in_len - prefix;  // the generator adds the prefix
        d.assumptions.push_back("shared prefixes cached; repeats of whole prompts within a group not modelled");
    }
    d.doc.set("traffic.prompt", prompt, "serving.workload.input_len");
    d.doc.set("traffic.output", out_len, c.has("serving.workload.output_len") ? "serving.workload.output_len" : "");
    return in_len;
}

// A static batch: one engine's batch (or a pool's over its replicas), dealt round-robin.
void translate_static_batch(ServingDraft& d, int64_t in_len) {
    const Case& c = d.c;
    if (!c.has("serving.workload.batch_size")) throw Unsupported{"a static batch without its size"};
    if (d.measured_pool == "both") throw Unsupported{"a static batch through a whole disaggregated system"};
    int64_t b = c.count("serving.workload.batch_size"), requests = 0;
    d.doc.set("traffic.arrival", std::string("offline"), "serving.workload.arrival");
    if (!d.measured_pool.empty() || d.ep > 1) {
        requests = b;
        b = (b + d.replicas - 1) / d.replicas;
        d.assumptions.push_back("static batch of " + std::to_string(requests) + " dealt over the " +
                                std::to_string(d.replicas) + " data-parallel ranks (" + std::to_string(b) + " each)");
    } else {
        requests = b * d.replicas;
    }
    d.doc.set("traffic.num_requests", requests, "serving.workload.batch_size");
    d.doc.set("serving.max_num_seqs", b, "serving.workload.batch_size");
    const bool decode_only = d.measured_pool == "decode";
    const int64_t budget = std::get<int64_t>(d.planned("serving.max_num_batched_tokens"));
    d.doc.set("serving.max_num_batched_tokens", std::max(budget, decode_only ? b : b * in_len),
              "serving.workload.batch_size");
    // A decode pool's batch runs continuously from its first decode step (its prompts are
    // prefilled elsewhere); a static policy would wait to prefill them.
    if (!decode_only) d.doc.set("serving.policy", std::string("static"), "serving.workload.arrival");
}

void translate_arrivals(ServingDraft& d, Translation& t, int64_t in_len) {
    const Case& c = d.c;
    const std::string arrival = c.text("serving.workload.arrival");
    auto requests = [&](int64_t fallback) {
        if (c.has("serving.workload.num_requests")) return c.count("serving.workload.num_requests");
        t.fill_ins.push_back("num_requests not stated: " + std::to_string(fallback));
        return fallback;
    };
    if (arrival == "static_batch") {
        if (c.has("serving.workload.sessions")) throw Unsupported{"a static batch of multi-turn conversations"};
        translate_static_batch(d, in_len);
    } else if (arrival == "offline") {
        d.doc.set("traffic.arrival", std::string("offline"), "serving.workload.arrival");
        d.doc.set("traffic.num_requests", requests(2000), "serving.workload.num_requests");
    } else if (arrival == "concurrency" && c.has("serving.workload.sessions")) {
        // Each client holds one conversation; the run ends when a client finds none left (vLLM's
        // multi-turn benchmark), before the requests cap below. No warm-up: its means cover all.
        d.doc.set("traffic.arrival", std::string("concurrency"), "serving.workload.arrival");
        d.doc.take(c, "serving.workload.concurrency", "traffic.concurrency");
        const int64_t turns =
            c.count(c.has("serving.workload.sessions.turns_max") ? "serving.workload.sessions.turns_max"
                                                                 : "serving.workload.sessions.turns_min");
        d.doc.set("traffic.num_requests", c.count("serving.workload.sessions.conversations") * turns,
                  "serving.workload.sessions");
        d.assumptions.push_back(
            "each client runs one conversation at a time; the run stops when a client finds no "
            "conversation left");
    } else if (arrival == "concurrency") {
        // A closed loop settles after the first round of requests; measure ten rounds after one.
        const int64_t clients = c.count("serving.workload.concurrency");
        d.doc.set("traffic.arrival", std::string("concurrency"), "serving.workload.arrival");
        d.doc.take(c, "serving.workload.concurrency", "traffic.concurrency");
        d.doc.set("traffic.num_requests", requests(11 * clients), "serving.workload.num_requests");
        d.doc.set("traffic.warmup_requests", clients, "serving.workload.concurrency");
        d.assumptions.push_back("closed loop measured over 10 rounds after a warm-up round");
    } else if (arrival == "poisson" || arrival == "constant") {
        d.doc.set("traffic.arrival", arrival, "serving.workload.arrival");
        const double rate = std::get<double>(d.doc.take(c, "serving.workload.request_rate", "traffic.rate"));
        d.doc.set("traffic.num_requests", requests(std::max<int64_t>(500, static_cast<int64_t>(rate * 600))),
                  "serving.workload.num_requests");
    } else {
        throw Unsupported{"arrival '" + arrival + "' is not modelled"};
    }
    // fathom's extension serving.router (a registered router: an imported case's scenario names it);
    // a benchmark of several replicas otherwise spreads requests in turn.
    if (c.has("serving.router")) d.doc.take(c, "serving.router", "serving.router");
    else d.doc.set("serving.router", std::string("round-robin"), "serving");
}

Translation translate_serving(const Case& c, const plans::EvaluationContext& ctx) {
    Translation t;
    ServingDraft d(c, *ctx.catalog, t.assumptions);
    check_expressible(c, d.measured_pool);
    d.doc.set("kind", std::string("serving"));
    d.doc.section_origin("serving", "serving");
    d.doc.section_origin("traffic", "serving.workload");
    d.model = translate_model(c, d.doc, t.assumptions, t.fill_ins);
    const std::string accelerator = translate_accelerator(c, d.catalog, d.doc, t.assumptions);
    check_workload(c, d.catalog, d.measured_pool);
    std::vector<std::string> nic;  // the NIC matters (and is said) only between nodes
    if (translate_cluster(c, d.catalog, accelerator, d.doc, nic, t.fill_ins) > 1)
        t.fill_ins.insert(t.fill_ins.end(), nic.begin(), nic.end());
    translate_engine(d, t);
    translate_kv_offload(d);
    translate_pool(d, c.count("cluster.gpus"));
    translate_precision(d, t);
    const int64_t in_len = translate_lengths(d);  // max_model_len first: the batching rules read it
    translate_batching(d);
    translate_arrivals(d, t, in_len);
    t.cannot_run = [](const std::vector<plans::Violation>& v) { return "the plan cannot run: " + plans::describe(v); };
    t.scenarios.push_back(CaseScenario{d.doc, {}, 0});
    return t;
}

double pick(const Percentiles& p, const std::string& statistic) {
    if (statistic == "median") return p.p50;
    if (statistic == "p90") return p.p90;
    if (statistic == "p95") return p.p95;
    if (statistic == "p99") return p.p99;
    if (statistic == "max") return p.max;
    return p.mean;  // mean, single (one aggregate figure)
}

// What the run did, as `fathom run` reports it: where a serving prediction's time went.
std::vector<std::string> run_summary(const workloads::serving::ServingReport& r) {
    char line[3][256];
    std::snprintf(line[0], sizeof line[0],
                  "%lld iterations of %.3f ms on average: %.1f sequences, %.0f tokens (%.1f decodes) each",
                  static_cast<long long>(r.iterations), 1e3 * r.iteration_s_mean, r.batch_size_mean,
                  r.batch_tokens_mean, r.batch_decodes_mean);
    std::snprintf(line[1], sizeof line[1],
                  "KV pool %.0f tokens per replica, %.1f%% used on average, %.1f%% at most; %lld preemptions",
                  r.kv_tokens_per_replica, 100 * r.kv_utilization_mean, 100 * r.kv_utilization_max,
                  static_cast<long long>(r.preemptions));
    std::snprintf(line[2], sizeof line[2], "%.1f requests in the system on average; weights %.2f GiB per GPU",
                  r.mean_in_system, r.weight_bytes_per_gpu / (1024.0 * 1024.0 * 1024.0));
    return {line[0], line[1], line[2]};
}

double serving_metric(const Case& c, const Evaluated& e, CompareResult& out) {
    const workloads::serving::ServingReport& r = *e.outcome->serving();
    const ServingPlan& p = std::get<ServingPlan>(e.scenario.plan);
    const auto isolate = p.isolate;
    const auto& pool = isolate == workloads::serving::PoolIsolation::Decode    ? *p.decode
                       : isolate == workloads::serving::PoolIsolation::Prefill ? *p.prefill
                                                                               : p.replica;
    const std::string metric = c.text("metric"), statistic = c.text("statistic", "single"),
                      scope = c.text("scope", "system");
    if (scope == "per_replica" && p.decode && isolate == workloads::serving::PoolIsolation::None)
        throw Unsupported{"a per-replica figure of a whole disaggregated system"};
    const double per = scope == "per_gpu" ? p.gpus() : scope == "per_replica" ? pool.replicas : 1;
    out.run_summary = run_summary(r);
    out.serving_plan = std::make_shared<const ServingPlan>(p);
    out.model = std::make_shared<const models::ModelSpec>(e.scenario.model);
    out.cluster = std::make_shared<const hardware::ClusterSpec>(e.scenario.cluster);
    // Static batches: throughput over the time the batches ran (all requests arrive at 0).
    if (metric == "output_tokens_per_s") return r.output_tokens_per_s / per;
    if (metric == "total_tokens_per_s") return r.total_tokens_per_s / per;
    if (metric == "input_tokens_per_s") return r.input_tokens_per_s / per;
    if (metric == "requests_per_s" || metric == "scheduled_requests_per_s") return r.requests_per_s / per;
    if (metric == "ttft_ms") return 1e3 * pick(r.ttft_s, statistic);
    if (metric == "tpot_ms") return 1e3 * pick(r.tpot_s, statistic);
    if (metric == "itl_ms") {
        std::string tool = c.text("serving.benchmark_tool");
        std::transform(tool.begin(), tool.end(), tool.begin(), [](unsigned char ch) { return std::tolower(ch); });
        const bool per_request =
            tool.find("genai-perf") != std::string::npos || tool.find("aiperf") != std::string::npos;
        out.assumptions.push_back(per_request ? "ITL as GenAI-Perf/AIPerf count it: per request, first token excluded"
                                              : "ITL per gap between tokens");
        return 1e3 * pick(per_request ? r.tpot_s : r.itl_s, statistic);
    }
    if (metric == "e2e_latency_s")
        return c.text("serving.workload.arrival") == "static_batch" ? r.e2e_s.max : pick(r.e2e_s, statistic);
    throw Unsupported{"metric '" + metric + "' is not predicted for serving"};
}

}  // namespace

const CaseKind& serving_kind() {
    static const CaseKind kind{"serving", translate_serving, serving_metric};
    return kind;
}

}  // namespace fathom::scenarios::measured
