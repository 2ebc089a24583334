// check_rl_plan (plans/rl_evaluate.h): an RL plan against its model and cluster, each violation at
// the key to change.
#include "plans/rl_evaluate.h"
#include "workloads/training/training_memory.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace fathom::plans {

using workloads::rl::Layout;
using workloads::rl::SyncPath;

std::vector<Violation> check_rl_plan(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                     const workloads::rl::RlPlan& p) {
    std::vector<Violation> v;
    const auto& rl = p.rl;
    const int64_t gpus = cluster.gpus();
    auto n = [](int64_t x) { return std::to_string(x); };
    if (rl.prompts < 1) v.push_back({"rl.prompts", "must be >= 1"});
    if (rl.samples < 1) v.push_back({"rl.samples", "must be >= 1 (answers per prompt)"});
    if (rl.staleness < 0) v.push_back({"rl.staleness", "must be >= 0 (versions behind)"});
    if (rl.minibatches < 1 || rl.epochs < 1)
        v.push_back({rl.minibatches < 1 ? "rl.minibatches" : "rl.epochs", "must be >= 1"});
    for (const auto* d : {&rl.prompt_len, &rl.response_len})
        if (auto why = d->check(); !why.empty()) v.push_back({d == &rl.prompt_len ? "rl.prompt" : "rl.response", why});
    if (rl.layout == Layout::Colocated) {
        if (rl.rollout_gpus > 0 && rl.rollout_gpus != gpus)
            v.push_back({"rl.rollout_gpus", "colocated: rollout and training share all " + n(gpus) +
                                                " GPUs (a pool of its own needs rl.layout: disaggregated)"});
        if (rl.staleness > 0)
            v.push_back({"rl.staleness",
                         "colocated GPUs take turns: rollout cannot run beside the update, so no "
                         "asynchronous bound applies (use rl.layout: disaggregated)"});
    } else {
        if (rl.rollout_gpus < 1) v.push_back({"rl.rollout_gpus", "missing: the rollout pool's GPUs (disaggregated)"});
        else if (rl.rollout_gpus >= gpus)
            v.push_back({"rl.rollout_gpus", "the rollout pool's " + n(rl.rollout_gpus) +
                                                " GPUs leave none of the "
                                                "cluster's " +
                                                n(gpus) + " to the trainer"});
        if (rl.sync == SyncPath::Ipc)
            v.push_back({"rl.sync",
                         "ipc hands weights over on the same GPUs: disaggregated pools have none in "
                         "common (use nccl or host)"});
    }
    if (rl.partial_rollout && rl.staleness < 1)
        v.push_back({"rl.partial_rollout",
                     "carrying answers into the next batch needs an asynchronous pipeline "
                     "(rl.staleness >= 1, rl.layout: disaggregated)"});
    if (rl.sync == SyncPath::Host && !(cluster.pcie.achievable_bandwidth() > 0))
        v.push_back({"rl.sync", "host needs the host link's bandwidth (cluster.pcie)"});
    if (rl.layout == Layout::Colocated && (rl.offload_rollout || rl.offload_trainer) &&
        !(cluster.pcie.achievable_bandwidth() > 0))
        v.push_back({rl.offload_rollout ? "rl.offload_rollout" : "rl.offload_trainer",
                     "offloading needs the host link's bandwidth (cluster.pcie)"});
    if (p.rollout.disaggregated())
        v.push_back({"serving.disaggregation", "rollout engines are aggregated replicas (no prefill/decode pools)"});
    if (!v.empty()) return v;
    const int64_t rollout = rl.rollout_pool(gpus), trainer = rl.trainer_pool(gpus);
    if (p.rollout.gpus() > rollout)
        v.push_back({"serving.replicas", "the rollout engines need " + n(p.rollout.gpus()) +
                                             " GPUs (replicas x tp x pp) but the rollout pool has " + n(rollout)});
    if (p.trainer.gpus() != trainer)
        v.push_back({"parallel.dp", "the trainer's layout uses " + n(p.trainer.gpus()) +
                                        " GPUs (dp x tp x pp x cp) but its pool has " + n(trainer)});
    if (!v.empty()) return v;
    v = check_serving_plan(model, rl_pool_cluster(cluster, rollout), rl_rollout_plan(p));
    // The trainer's global batch is derived per iteration: checked here at one micro-batch a rank.
    workloads::TrainingPlan t = p.trainer;
    t.training.global_batch =
        static_cast<int>(std::min<int64_t>(int64_t{t.layout.dp} * t.training.micro_batch, 1 << 30));
    const hardware::ClusterSpec trainer_cluster = rl_pool_cluster(cluster, trainer);
    for (Violation& x : check_training_plan(model, trainer_cluster, t)) v.push_back(std::move(x));
    if (!v.empty()) return v;
    // A trainer whose weights, gradients and optimizer state alone exceed a device cannot hold the
    // policy at any batch: an impossible plan (activations past the memory are an OOM verdict).
    const workloads::TrainingMemory mem = workloads::estimate_training_memory(model, trainer_cluster, t);
    for (const auto& stage : mem.stages) {
        const double states = stage.memory.weights + stage.memory.gradients + stage.memory.optimizer;
        if (states > mem.capacity_bytes) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "the trainer cannot hold the policy: its weights, gradients and optimizer state take %.1f "
                          "GB of a device's %.1f GB (shard them: parallel.tp, parallel.pp, training.zero_stage)",
                          states / 1e9, mem.capacity_bytes / 1e9);
            v.push_back({"parallel.tp", buf});
            break;
        }
    }
    return v;
}

}  // namespace fathom::plans
