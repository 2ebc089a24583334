#pragma once
// What fathom_bench's files share: one evaluation context (as a plan searcher holds it) and the
// training plans the step and search benchmarks start from.
#include "plans/evaluate.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace fathom::bench {

inline const plans::EvaluationContext& context() {
    static const plans::EvaluationContext c = scenarios::make_context(scenarios::load_catalog(FATHOM_SOURCE_DIR));
    return c;
}
inline const plans::Catalog& catalog() { return *context().catalog; }

// tp x pp x dp with vp virtual stages, micro-batch 1, sequence parallelism, ZeRO-1, the layout's
// default schedule.
inline workloads::TrainingPlan plan(int tp, int pp, int dp, int vp, int global_batch, int64_t seq) {
    workloads::TrainingPlan p;
    p.layout.tp = tp;
    p.layout.pp = pp;
    p.layout.dp = dp;
    p.layout.vp = vp;
    p.training.micro_batch = 1;
    p.training.global_batch = global_batch;
    p.training.seq_len = seq;
    p.layout.sequence_parallel = true;
    p.training.zero_stage = 1;
    p.training.schedule = workloads::default_schedule(p.layout);
    return p;
}

// BM_Serving's workload: Llama 3.1 70B on 8 replicas of TP4 H100, Sarathi-Serve with a 512-token
// budget, least-outstanding routing; `serving_extra` (", key: value") joins the serving section,
// `traffic` is the traffic section's flow mapping.
inline plans::Scenario serving_scenario(const std::string& serving_extra, const std::string& traffic) {
    const std::string yaml =
        "kind: serving\nmodel: llama3-70b\ncluster: {accelerator: h100-sxm-80gb, nodes: 4, gpus_per_node: 8}\n"
        "serving: {engine: vllm, tp: 4, replicas: 8, policy: sarathi, max_num_batched_tokens: 512, router: "
        "least-outstanding" +
        serving_extra + "}\ntraffic: " + traffic + "\n";
    return scenarios::parse_scenario(scenarios::load_yaml_string(yaml, "bench"), catalog());
}
// Poisson arrivals at `rate` of `requests` requests of 1024 prompt and 256 output tokens.
inline std::string poisson_traffic(int64_t rate, int64_t requests) {
    return "{arrival: poisson, rate: " + std::to_string(rate) + ", num_requests: " + std::to_string(requests) +
           ", prompt: 1024, output: 256}";
}

// The growth exponent k of time ~ work^k: the least-squares slope of log time against log work.
inline double growth_exponent(const std::vector<double>& work, const std::vector<double>& seconds) {
    const double n = static_cast<double>(work.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < work.size(); ++i) {
        const double x = std::log(work[i]), y = std::log(seconds[i]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace fathom::bench
