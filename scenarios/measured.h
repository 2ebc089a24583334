#pragma once
// `fathom compare`: reads measurement files in measured-format v1 (shared/reference/measured-format.md)
// and predicts each case. A case is translated into scenario documents in scenario key paths by the
// translator of its kind (scenarios/measured_kinds.h: training, serving, microbench), which the
// ordinary scenario parser (scenarios/scenario.h) reads and plans::evaluate runs; the framework's or
// engine's preset (workloads/stacks/, workloads/engines/, each value with its source) fills what the
// source omits, named rules (scenarios/measured_rules.h) what it says in words, and each remaining
// gap is a documented rule listed per case as an assumption. Every configuration field of the case
// is either read by the translator or listed as stated but not modelled (`not_modelled`). Cases
// fathom cannot express yet are returned with status unsupported and why.
#include "plans/context.h"
#include "plans/report.h"
#include "sim/enum_names.h"
#include "workloads/training/training_step.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fathom::scenarios {

enum class CompareStatus { Ok, Unsupported };
constexpr auto enum_names(CompareStatus) {
    return sim::name_table<CompareStatus>({{CompareStatus::Ok, "ok"}, {CompareStatus::Unsupported, "unsupported"}});
}

struct CompareResult {
    std::string id;       // case id; "<case id>#<n>" for the n-th entry of other_metrics
    std::string variant;  // for other_metrics entries: the changed fields ("a=1, b=2"), empty if none
    std::string kind;
    std::string metric;
    std::string unit;
    double measured = 0;
    double predicted = 0;
    double error = 0;  // (predicted - measured) / measured
    CompareStatus status = CompareStatus::Unsupported;
    std::string reason;  // for unsupported
    std::vector<std::string> assumptions;
    // Fill-ins of unstated fields that the case's kind did not list among its assumptions before the
    // kinds shared one cluster and model reader (a serving case's node size and NIC, a fp16 serving
    // case priced as bf16): kept apart so that the assumptions stay comparable with earlier outputs.
    std::vector<std::string> fill_ins;
    // The configuration fields the case states (dotted paths, measured_schema.h) that no translator
    // read: stated by the source, not modelled.
    std::vector<std::string> not_modelled;
    std::string stack;        // the stack preset used ("defaults": none for this framework)
    std::string accelerator;  // the accelerator the case ran on (its catalog id)
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
    // Serving cases: what the run did, for `--case` (iterations, batch, KV pool), one line each.
    std::vector<std::string> run_summary;
    // Training cases: the plan that ran (fill-ins applied) and its per-stage breakdown.
    std::string plan;
    std::vector<workloads::StageReport> stages;
    // The model and cluster that ran, and a training case's plan (fill-ins applied), for a plan
    // search around the published plan (`fathom compare --rank-plans`) and for `fathom export`.
    std::shared_ptr<const models::ModelSpec> model;
    std::shared_ptr<const hardware::ClusterSpec> cluster;
    std::shared_ptr<const workloads::TrainingPlan> training_plan;
    // Serving cases: the plan that ran (its features for the validation bands).
    std::shared_ptr<const workloads::serving::ServingPlan> serving_plan;

    bool ok() const { return status == CompareStatus::Ok; }
};

// The relative error of a prediction, (predicted - measured) / measured: the one place it is
// computed.
double relative_error(double predicted, double measured);

// Headline measurement of every case. With `include_other_metrics`, also every other_metrics entry
// (the case's configuration with its `variant` fields applied; derived fields such as dp follow).
// With `only_case`, only the case of that id (and its entries) runs.
// `progress`, if set, is called after each case with (cases done, cases in the file).
// A result as a flat record (plans/report.h): id, kind, metric, unit, measured, variant, status,
// then predicted, error, step_time_s, memory fields, out_of_memory, assumptions, fill_ins,
// not_modelled, stack, plan and range.{key, low, high} for a simulated case, or reason for an
// unsupported one (the `fathom compare --json` keys, less the per-stage table and the range's
// values).
plans::Record compare_record(const CompareResult& r);

std::vector<CompareResult> compare_measured(const std::string& path, const plans::EvaluationContext& context,
                                            bool include_other_metrics = false, const std::string& only_case = "",
                                            const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace fathom::scenarios
