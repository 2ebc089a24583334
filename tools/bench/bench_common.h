#pragma once
// What fathom_bench's files share: one evaluation context (as a plan searcher holds it) and the
// training plans the step and search benchmarks start from.
#include "plans/evaluate.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <cmath>
#include <cstdint>
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
