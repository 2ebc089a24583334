#pragma once
// A training step's traffic on the flow network (workloads/replay/flow_replay.h): the patterns its
// communication streams move, declared on a flow session, and the replay's streams routed to them.
//
// Per pipeline stage and group kind: every group of that kind among the stage's ranks runs the
// collective the kind mostly runs (tp: all-reduce, or all-gather under sequence parallelism; cp:
// all-gather, the ring of K/V passes, or all-to-all under a2a; dp: reduce-scatter; ep: all-to-all);
// all of them ring-shaped or all-to-all, so one pattern per stream is exact in where the bytes go
// for everything but the expert-data-parallel gradients, which ride the DP stream on the DP
// pattern. Per direction of pipeline sends actually made (stage a to stage b): every rank of a
// sends to its peer in b.
#include "hardware/network/network_model.h"
#include "hardware/network/simgrid_network.h"
#include "workloads/replay/flow_replay.h"
#include "workloads/training/pipeline_replay.h"
#include "workloads/training/training_plan.h"

#include <map>
#include <utility>
#include <vector>

namespace fathom::workloads {

// The patterns of one job, kept to route its later steps (a session takes no new patterns once
// flows run): per (stage, kind) of stream and per (from, to) of pipeline sends, the pattern and its
// reference time.
struct StepPatterns {
    std::map<std::pair<int, int>, std::pair<int, double>> streams, sends;
};

// `rank_of[r]`: the cluster GPU of the job's rank r (empty: the identity, a job alone on the
// cluster's first GPUs). `network` prices the reference calls as it priced the step. Patterns
// come from `known` where it has them (another step of the same job) and are added to it.
void route_step_flows(FlowReplay& replay, hardware::FlowSession& session, const hardware::NetworkModel& network,
                      sim::TaskGraph& graph, const PipelineReplay& pipeline, const TrainingPlan& plan,
                      const std::vector<int>& rank_of = {}, StepPatterns* known = nullptr);

}  // namespace fathom::workloads
