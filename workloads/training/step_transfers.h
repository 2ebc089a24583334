#pragma once
// A training step's communication handed to the network's timer (hardware/network/transfer_timer.h):
// the communicators its tasks run on, declared once, and every communication task of the replay
// with the transfer it moves.
//
// The replay simulates one rank per pipeline stage, so a task of a stage's tp, cp, dp or ep stream
// stands for every group of that kind among the stage's ranks running it at once: those groups are
// the stage's communicator of that kind, connected as the collective the kind mostly runs connects
// them (tp: all-reduce, or all-gather under sequence parallelism; cp: all-gather, the ring of K/V
// passes, or all-to-all under a2a; dp: reduce-scatter; ep: all-to-all), all ring-shaped or
// all-to-all, so exact in where the bytes go for everything but the expert-data-parallel gradients,
// which ride the dp stream and its communicator. A pipeline send from stage a to stage b stands
// for every rank of a sending to its peer in b: one communicator per direction used.
#include "hardware/network/network_model.h"
#include "hardware/network/transfer_timer.h"
#include "workloads/training/pipeline_replay.h"
#include "workloads/training/training_plan.h"

#include <map>
#include <utility>
#include <vector>

namespace fathom::workloads {

// The communicators of one job, kept to carry its later steps (a flow network takes no new
// communicators once transfers run): per (stage, kind) of stream and per (from, to) of pipeline
// sends, the communicator id and the transfer its tasks carry (on its first group).
struct StepCommunicators {
    struct Entry {
        int id = -1;
        hardware::Transfer transfer;
    };
    std::map<std::pair<int, int>, Entry> streams, sends;
};

// `rank_of[r]`: the cluster GPU of the job's rank r (empty: the identity, a job alone on the
// cluster's first GPUs). `network` is the cost oracle that priced the step (the communicators'
// reference times). Communicators come from `known` where it has them (another step of the same
// job) and are added to it.
void carry_step_transfers(hardware::TransferTimer& timer, const hardware::NetworkModel& network, sim::TaskGraph& graph,
                          const PipelineReplay& pipeline, const TrainingPlan& plan,
                          const std::vector<int>& rank_of = {}, StepCommunicators* known = nullptr);

}  // namespace fathom::workloads
