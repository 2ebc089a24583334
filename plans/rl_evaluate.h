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

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fathom::plans {

// The pools' clusters: the rollout pool's GPUs are the cluster's first rollout_gpus, the
// trainer's the rest; colocated, both are the whole cluster. A pool that is not whole nodes has
// nodes of gcd(its GPUs, gpus_per_node) GPUs (their NICs in proportion).
hardware::ClusterSpec rl_pool_cluster(const hardware::ClusterSpec& cluster, int64_t gpus);

// The rollout engines' serving plan: the scenario's, its traffic the batch's requests at time 0
// (`answers` of them, 0: prompts x samples; none warm-up).
workloads::serving::ServingPlan rl_rollout_plan(const workloads::rl::RlPlan& plan, int64_t answers = 0);

// Checks of the RL settings against the cluster and the two plans (empty: the plan can run).
std::vector<Violation> check_rl_plan(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                     const workloads::rl::RlPlan& plan);

// The rollouts and training steps of a search's candidates, by what each depends on (a rollout:
// the engines' plan, their pool and the batch; a step: the model, its update plan and pool), so
// that candidates differing elsewhere (the trainer's layout, the staleness bound) share them.
// Thread-safe; every value is a pure function of its key, so a search gives the same results at
// any thread count.
class RlMemo {
public:
    template <typename F>
    std::shared_ptr<const Outcome> get(const std::string& key, F&& compute) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (auto it = cache_.find(key); it != cache_.end()) return it->second;
        }
        auto value = std::make_shared<const Outcome>(compute());
        std::lock_guard<std::mutex> lock(mutex_);
        return cache_.emplace(key, std::move(value)).first->second;
    }

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const Outcome>> cache_;
};

// The outcome's report is an RlReport (Outcome::rl()); violations instead when the plan cannot run.
// options.progress: (iterations done, iterations). `memo`: a search's shared phases (none: each
// priced afresh).
Outcome evaluate_rl(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                    const workloads::rl::RlPlan& plan, const EvaluationContext& context, uint64_t seed,
                    const EvaluateOptions& options = {}, RlMemo* memo = nullptr);

}  // namespace fathom::plans
