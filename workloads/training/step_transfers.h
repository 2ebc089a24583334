#pragma once
// A training step's communication handed to the network's timer (hardware/network/transfer_timer.h):
// the communicators its transfers run on, declared once, and every communication task of the
// replay with the transfers it moves (its collectives as the priced program lists them:
// workloads/replay/program_cost.h CommMove).
//
// The replay simulates one rank per pipeline stage, so a transfer over the rank's group of a kind
// (tp, cp, ep, dp, edp) stands for every group of that kind among the stage's ranks running it at
// once: those groups are the stage's communicator of that kind. A pipeline send from stage a to
// stage b stands for every rank of a sending to its peer in b: one communicator per direction
// used. A transfer's group is the rank's own (the communicator's first group).
#include "hardware/network/network_model.h"
#include "hardware/network/transfer_timer.h"
#include "workloads/training/pipeline_replay.h"
#include "workloads/training/training_plan.h"

#include <map>
#include <utility>
#include <vector>

namespace fathom::workloads {

// The communicators of one job, kept to carry its later steps (a flow network takes no new routes
// once transfers run): per (stage, group kind) and per (from, to) of pipeline sends, the
// communicator id and the rank's group of it on the cluster.
struct StepCommunicators {
    struct Entry {
        int id = -1;
        hardware::CommGroup group;
    };
    std::map<std::pair<int, int>, Entry> groups, sends;
};

// `rank_of[r]`: the cluster GPU of the job's rank r (empty: the identity, a job alone on the
// cluster's first GPUs). Communicators come from `known` where it has them (another step of the
// same job) and are added to it, in the order the tasks first use them.
void carry_step_transfers(hardware::TransferTimer& timer, sim::TaskGraph& graph, const PipelineReplay& pipeline,
                          const TrainingPlan& plan, const std::vector<int>& rank_of = {},
                          StepCommunicators* known = nullptr);

}  // namespace fathom::workloads
