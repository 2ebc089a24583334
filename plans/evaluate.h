#pragma once
// evaluate(): predicts a scenario in-process and returns an outcome: the workload's report, or the
// plan's violations as a value (an impossible plan is an expected answer for a searcher, not an
// exception). Builds the cost and network models from the cluster and the context, and runs a fresh
// simulation; pure and thread-safe (no shared mutable state), so equal inputs give bit-identical
// outcomes at any thread count.
#include "models/cost/cost_model.h"
#include "plans/constraints.h"
#include "plans/context.h"
#include "plans/run.h"
#include "plans/scenario.h"
#include "sim/enum_names.h"
#include "workloads/rl/rl_report.h"
#include "workloads/serving/serving_sim.h"
#include "workloads/training/training_step.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fathom::plans {

using WorkloadReport = std::variant<workloads::StepReport, workloads::serving::ServingReport, workloads::rl::RlReport>;

// Where op costs came from: the accelerator's calibrated table, the roofline (no table), or both
// (disaggregated pools on devices of which only some have a table).
enum class CostModelKind { Table, Roofline, Mixed };
constexpr auto enum_names(CostModelKind) {
    return sim::name_table<CostModelKind>(
        {{CostModelKind::Table, "table"}, {CostModelKind::Roofline, "roofline"}, {CostModelKind::Mixed, "mixed"}});
}

struct Outcome {
    std::vector<Violation> violations;  // non-empty: the plan cannot run, and there is no report
    std::optional<WorkloadReport> report;
    CostModelKind cost_model = CostModelKind::Roofline;
    // A training scenario's whole run (its `run` section), when the step fits in memory.
    struct Run {
        RunPlan plan;
        RunSummary summary;
    };
    std::optional<Run> run;

    bool ok() const { return violations.empty() && report.has_value(); }
    const workloads::StepReport* training() const {
        return report ? std::get_if<workloads::StepReport>(&*report) : nullptr;
    }
    const workloads::serving::ServingReport* serving() const {
        return report ? std::get_if<workloads::serving::ServingReport>(&*report) : nullptr;
    }
    const workloads::rl::RlReport* rl() const {
        return report ? std::get_if<workloads::rl::RlReport>(&*report) : nullptr;
    }
};

struct EvaluateOptions {
    std::ostream* trace = nullptr;  // Chrome/Perfetto trace output, optional
    // serving: iteration costs shared with other evaluations of the same model, cluster and
    // context (a search's candidates), or none.
    workloads::serving::IterationCostShare* cost_share = nullptr;
    bool keep_records = false;                   // serving: per-request records in the report
    workloads::ServingSeries* series = nullptr;  // serving: the report's time series (serving_series.h)
    // serving: (requests finished, expected or 0); training on the SimGrid network: (collectives
    // simulated, 0)
    std::function<void(int64_t, int64_t)> progress;
};

Outcome evaluate(const Scenario& scenario, const EvaluationContext& context, const EvaluateOptions& options = {});
// One training plan on a model and a cluster (what evaluate() does for a training scenario).
// The op-cost model of an accelerator: its calibrated table when the context has one (kind
// Table), else the roofline (Roofline); at sustained (training, serving) or kernel clocks (an
// isolated benchmark loop).
std::unique_ptr<models::CostModel> cost_model_for(const hardware::AcceleratorSpec& accelerator,
                                                  const EvaluationContext& context, CostModelKind& kind,
                                                  models::Load load = models::Load::Sustained);

Outcome evaluate_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                          const workloads::TrainingPlan& plan, const EvaluationContext& context,
                          const EvaluateOptions& options = {});

// One serving plan under its traffic (what evaluate() does for a serving scenario); `seed` drives
// the traffic generator. `source`, when given, replaces the plan's traffic (an RL rollout batch).
Outcome evaluate_serving(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                         const workloads::serving::ServingPlan& plan, const EvaluationContext& context, uint64_t seed,
                         const EvaluateOptions& options = {}, workloads::serving::RequestSource* source = nullptr);

// What a pool's iteration costs depend on besides the model, the cluster and the context: its
// shape and accelerator, and every serving key except those known to stay outside an iteration's
// price (traffic, SLOs, replica counts, batching limits, KV-cache sizing and offloading, routing,
// autoscaling, LoRA adapters: priced apart). A key not listed as outside counts, so a new key can
// only lower sharing, never mix two pricings. The signature of IterationCostShare.
uint64_t pool_cost_signature(const workloads::serving::ServingPlan& plan, const workloads::serving::PoolLayout& pool);

}  // namespace fathom::plans
