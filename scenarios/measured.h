#pragma once
// Reads measurement files in measured-format v1 (shared/reference/measured-format.md) and
// predicts each training case: the case's own model dims, cluster and plan become fathom specs; the
// framework's software stack is its preset (workloads/stacks/, each value with its source), and
// what the source omits beyond it is filled by documented rules (listed per case as assumptions).
// Cases fathom cannot express yet are returned with status "unsupported" and why.
#include "plans/context.h"
#include "plans/report.h"
#include "workloads/training/training_step.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fathom::scenarios {

struct CompareResult {
    std::string id;       // case id; "<case id>#<n>" for the n-th entry of other_metrics
    std::string variant;  // for other_metrics entries: the changed fields ("a=1, b=2"), empty if none
    std::string kind;
    std::string metric;
    std::string unit;
    double measured = 0;
    double predicted = 0;
    double error = 0;    // (predicted - measured) / measured
    std::string status;  // "ok" or "unsupported"
    std::string reason;  // for unsupported
    std::vector<std::string> assumptions;
    std::string stack;  // the stack preset used ("defaults": none for this framework)
    double step_time_s = 0;
    double peak_memory_bytes = 0;
    double memory_capacity_bytes = 0;
    bool out_of_memory = false;
    // A fill-in the source leaves open, simulated over its plausible values (e.g. vp of an
    // interleaved schedule without a virtual-stage count): the key, the values that ran, and the
    // lowest and highest prediction; `predicted` is the median one. Empty key: a single run.
    std::string range_key;
    std::vector<int> range_values;
    double range_low = 0, range_high = 0;
    // Training cases: the plan that ran (fill-ins applied) and its per-stage breakdown.
    std::string plan;
    std::vector<workloads::StageReport> stages;
    // Training cases: the model, cluster and plan that ran (fill-ins applied), for a plan search
    // around the published plan (`fathom compare --rank-plans`).
    std::shared_ptr<const models::ModelSpec> model;
    std::shared_ptr<const hardware::ClusterSpec> cluster;
    std::shared_ptr<const workloads::TrainingPlan> training_plan;
};

// Headline measurement of every case. With `include_other_metrics`, also every other_metrics entry
// (the case's configuration with its `variant` fields applied; derived fields such as dp follow).
// With `only_case`, only the case of that id (and its entries) runs.
// `progress`, if set, is called after each case with (cases done, cases in the file).
// A result as a flat record (plans/report.h): id, kind, metric, unit, measured, variant, status,
// then predicted, error, step_time_s, memory fields, out_of_memory, assumptions, stack, plan and
// range.{key, low, high} for a simulated case, or reason for an unsupported one (the
// `fathom compare --json` keys, less the per-stage table and the range's values).
plans::Record compare_record(const CompareResult& r);

std::vector<CompareResult> compare_measured(const std::string& path, const plans::EvaluationContext& context,
                                            bool include_other_metrics = false, const std::string& only_case = "",
                                            const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace fathom::scenarios
