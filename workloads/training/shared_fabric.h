#pragma once
// Training jobs sharing one fabric: each job's step alone on its GPUs and with the others running
// at the same time, every transfer of every job timed by one timer of the fabric's network (on a
// flow network, flows on the same links: hardware/network/transfer_timer.h). The question a
// cluster operator asks before co-locating jobs: how much slower does each one get?
//
// Together, the jobs start at the same time and each runs steps back to back, starting new ones
// until the horizon `steps` x the slowest job's step alone has passed: the slowest job runs about
// `steps` steps, faster ones more, all of them beside the others' traffic as their phases drift.
// A job's shared step time is the mean of its steps. Each job is priced as on its own cluster (its
// StepInputs); only where its ranks sit on the fabric (`rank_of`) and who shares its links change.
#include "hardware/network/network_model.h"
#include "workloads/training/step_transfers.h"
#include "workloads/training/training_step.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fathom::workloads {

struct SharedJob {
    const StepInputs* inputs = nullptr;
    std::vector<int> rank_of;  // the fabric GPU of each of the job's ranks
};

struct SharedJobResult {
    StepReport alone;                  // one step alone on the fabric at its placement
    std::vector<double> shared_steps;  // each step's time with every job running, s
    double shared_step_s = 0;          // their mean
    uint64_t shared_flows = 0;         // flows its transfers started, all steps
};

// `progress(done, total)`: after each simulation (one per job alone, then all together).
std::vector<SharedJobResult> simulate_shared_fabric(const std::vector<SharedJob>& jobs,
                                                    const hardware::NetworkModel& fabric, int steps = 3,
                                                    const std::function<void(int64_t, int64_t)>& progress = {});

// Whole nodes for jobs of `gpus[j]` GPUs on a fabric of `nodes` nodes of `gpus_per_node`:
// "packed" gives each job consecutive nodes (job 0 first); "interleaved" deals nodes out in turn
// (node k to the k-th job in rotation that still needs nodes), so the jobs share every leaf.
// InputError when a job is not whole nodes or the jobs need more nodes than there are.
std::vector<std::vector<int>> place_jobs(const std::vector<int>& gpus, int nodes, int gpus_per_node,
                                         const std::string& placement);

}  // namespace fathom::workloads
