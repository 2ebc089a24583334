#include "plans/run_elastic.h"

#include <limits>
#include <string>

namespace fathom::plans {

namespace {

int64_t replica_gpus(const workloads::TrainingPlan& plan) { return plan.gpus() / plan.layout.dp; }

}  // namespace

int replicas_per_node(const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan) {
    const int64_t replica = replica_gpus(plan);
    return replica >= cluster.gpus_per_node ? 1 : static_cast<int>(cluster.gpus_per_node / replica);
}

std::vector<Violation> elastic_violations(const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan,
                                          const RunRequest& request) {
    if (request.recovery != Recovery::Elastic) return {};
    const int64_t replica = replica_gpus(plan);
    const int64_t gpn = cluster.gpus_per_node;
    if (replica % gpn != 0 && gpn % replica != 0)
        return {{"run.recovery", "elastic: a data-parallel replica (tp x pp x cp = " + std::to_string(replica) +
                                     " GPUs) neither fills whole nodes nor divides one (" + std::to_string(gpn) +
                                     " GPUs): a failed node would take parts of several replicas"}};
    if (plan.layout.dp <= replicas_per_node(cluster, plan))
        return {{"run.recovery", "elastic: a failed node would take every data-parallel replica (parallel.dp " +
                                     std::to_string(plan.layout.dp) + "): nothing could go on without it"}};
    return {};
}

std::optional<DegradedLayout> degraded_layout(const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan,
                                              int out) {
    const int64_t dp = plan.layout.dp - int64_t{replicas_per_node(cluster, plan)} * out;
    if (dp < 1) return std::nullopt;
    DegradedLayout d{cluster, plan};
    const int64_t micro = plan.training.global_batch / plan.training.micro_batch;  // the full job's M
    const int64_t each = (micro + dp - 1) / dp;
    d.plan.layout.dp = static_cast<int>(dp);
    const int64_t batch = dp * each * plan.training.micro_batch;
    if (batch > std::numeric_limits<int>::max()) return std::nullopt;
    d.plan.training.global_batch = static_cast<int>(batch);
    d.cluster.nodes = static_cast<int>(dp * replica_gpus(plan) / cluster.gpus_per_node);
    return d;
}

}  // namespace fathom::plans
