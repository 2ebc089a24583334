#pragma once
// A scenario as typed data, whatever its front end (a YAML file through scenarios/, Python, a plan
// searcher, a measured case translated by `fathom compare`): a model, a cluster and the plan of
// one workload kind (training or serving). Adding a workload kind means adding its plan to
// WorkloadPlan and its evaluation to plans/evaluate.cpp (CONTRIBUTING.md).
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "plans/cluster_request.h"
#include "plans/run_request.h"
#include "plans/search_space.h"
#include "sim/enum_names.h"
#include "workloads/rl/rl_plan.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/training/training_plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fathom::plans {

// Something in the input that cannot change the result (a key no model reads yet), said once.
struct Warning {
    std::string file;
    int line = 0;
    std::string key;
    std::string message;
    std::string text() const;  // "file:line: key 'k': message"
};

// Rl: post-training by reinforcement learning, rollout engines and a trainer in a loop
// (workloads/rl/).
enum class WorkloadKind { Training, Serving, Rl };
constexpr auto enum_names(WorkloadKind) {
    return sim::name_table<WorkloadKind>(
        {{WorkloadKind::Training, "training"}, {WorkloadKind::Serving, "serving"}, {WorkloadKind::Rl, "rl"}});
}

using WorkloadPlan = std::variant<workloads::TrainingPlan, workloads::serving::ServingPlan, workloads::rl::RlPlan>;

struct Scenario {
    std::string file;
    std::string name;
    uint64_t seed = 1;
    models::ModelSpec model;
    hardware::ClusterSpec cluster;  // resolved against the catalog
    WorkloadPlan plan;
    std::optional<SearchSpace> search;  // the `search` section, when given (training or serving axes)
    std::optional<RunRequest> run;      // the `run` section of a training scenario, when given
    std::vector<Warning> warnings;

    WorkloadKind kind() const { return static_cast<WorkloadKind>(plan.index()); }
    const workloads::TrainingPlan* training() const { return std::get_if<workloads::TrainingPlan>(&plan); }
    const workloads::serving::ServingPlan* serving() const {
        return std::get_if<workloads::serving::ServingPlan>(&plan);
    }
    const workloads::rl::RlPlan* rl() const { return std::get_if<workloads::rl::RlPlan>(&plan); }
};

}  // namespace fathom::plans
