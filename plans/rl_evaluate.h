#pragma once
// evaluate_rl(): an RL post-training plan's iterations (workloads/rl/). Each simulated iteration
// draws its rollout batch, serves it on the rollout engines (the serving simulator, the batch as
// requests at time 0 with each prompt a shared prefix), trains on it (the training-step model
// over the packed answers, once per optimizer step), prices the forward passes, the weight sync
// (the network model) and, colocated, the host copies between phases (the host link); then the
// pipeline (workloads/rl/rl_pipeline.h) lays the iterations out.
#include "plans/constraints.h"
#include "plans/context.h"
#include "plans/evaluate.h"
#include "workloads/rl/rl_plan.h"
#include "workloads/rl/rl_report.h"

#include <vector>

namespace fathom::plans {

// The pools' clusters: the rollout pool's GPUs are the cluster's first rollout_gpus, the
// trainer's the rest; colocated, both are the whole cluster. A pool that is not whole nodes has
// nodes of gcd(its GPUs, gpus_per_node) GPUs (their NICs in proportion).
hardware::ClusterSpec rl_pool_cluster(const hardware::ClusterSpec& cluster, int64_t gpus);

// The rollout engines' serving plan: the scenario's, its traffic the batch's requests at time 0
// (prompts x samples of them, none warm-up).
workloads::serving::ServingPlan rl_rollout_plan(const workloads::rl::RlPlan& plan);

// Checks of the RL settings against the cluster and the two plans (empty: the plan can run).
std::vector<Violation> check_rl_plan(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                     const workloads::rl::RlPlan& plan);

// The outcome's report is an RlReport (Outcome::rl()); violations instead when the plan cannot run.
// options.progress: (iterations done, iterations).
Outcome evaluate_rl(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                    const workloads::rl::RlPlan& plan, const EvaluationContext& context, uint64_t seed,
                    const EvaluateOptions& options = {});

}  // namespace fathom::plans
