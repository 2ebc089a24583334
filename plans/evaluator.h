#pragma once
// evaluate(): predicts one training step of a plan in-process. Builds the cost and network models
// from the cluster spec, checks the plan, and runs a fresh simulation; safe to call from many
// threads at once (no shared mutable state).
#include <iosfwd>
#include <string>

#include "plans/constraints.h"
#include "workloads/training/training_step.h"

namespace fathom::models {
struct CalibrationTable;
}

namespace fathom::plans {


struct EvaluateOptions {
    std::string collective_algorithm;  // empty = fastest per call
    const models::CalibrationTable* cost_table = nullptr;  // calibrated per-op costs, else roofline
    std::ostream* trace = nullptr;     // Chrome trace output, optional
};

// Throws sim::InputError listing every violation if the plan is impossible.
workloads::StepReport evaluate_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                        const workloads::TrainingPlan& plan, const EvaluateOptions& options = {});

}  // namespace fathom::plans
