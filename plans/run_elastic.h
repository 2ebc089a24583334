#pragma once
// Elastic recovery's layouts (run.recovery elastic; workloads/run/training_run.h, Elastic): the job
// with some failed nodes' data-parallel replicas out and the global batch kept, for the step model
// to price once per depth reached.
#include "hardware/spec.h"
#include "plans/constraints.h"
#include "plans/run_request.h"
#include "workloads/training/training_plan.h"

#include <optional>
#include <vector>

namespace fathom::plans {

// The replicas one node's failure takes out: a replica spanning whole nodes loses one (its other
// nodes idle until it rejoins, as TorchFT's replica groups do; ElasWave's pipeline resharding that
// keeps them busy is not modelled), several replicas on one node all of them.
int replicas_per_node(const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan);

// Why the plan cannot go on without a node's replicas (key run.recovery): no second data-parallel
// replica, or replicas that neither fill whole nodes nor divide one. Empty when it can, or when
// recovery is not elastic.
std::vector<Violation> elastic_violations(const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan,
                                          const RunRequest& request);

// The cluster and plan with `out` failed nodes' replicas out: dp less replicas_per_node x out, each
// replica running ceil(M / dp') of the full job's M micro-batches (the busiest replica's share: the
// global batch is kept, ElasWave splits it unevenly), on the nodes those replicas use. None when no
// replica would be left.
struct DegradedLayout {
    hardware::ClusterSpec cluster;
    workloads::TrainingPlan plan;
};
std::optional<DegradedLayout> degraded_layout(const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan,
                                              int out);

}  // namespace fathom::plans
