#pragma once
// The network backend as the timer of communication tasks (SimGrid's and ASTRA-sim's contract): a
// communication task carries what it moves, one or more transfers {collective, bytes, group} in the
// order the program issues them, and the network backend decides when it ends. A workload gets its
// timer from NetworkModel::timer() whatever the backend, declares the communicators its transfers
// run on, hands every communication task to the timer with its transfers (only where
// times_tasks(): the closed form needs no list), and runs the engine through the timer.
//
//   closed form (analytical network): a task ends at its start + the closed-form cost it was
//     planned with (the sum of the cost oracle's answers for its transfers, or for the parts of
//     them the task holds); a graph does that by itself, so the timer adds nothing per task. A
//     transfer outside any task graph ends at now + its cost.
//   flows (SimGrid network, flow_timer.cpp): a task runs the flows of its own transfers, one
//     after another: each transfer as the network would run that call (the algorithm
//     NetworkModel::plan() picks for its collective, bytes and group, with that algorithm's flows
//     for every group of its communicator, and its fixed part: launch, latencies, pipeline fill),
//     taking until its last flow has arrived plus its fixed part; the task ends with its last
//     transfer. Its planned duration is not used. Transfers that overlap in time share links
//     max-min, so contention comes out of the simulation; alone a transfer takes its own flows'
//     time (within a few percent of the closed form: simgrid_network_test.cpp), so an uncontended
//     replay gives back about, not exactly, the priced step. A transfer the pricing splits into a
//     part hidden beside compute and a part exposed (TP overlap, context-parallel steps) is carried
//     by both tasks, each moving its share of the bytes and of the fixed part.
//
// Units: seconds, bytes.
#include "hardware/network/network_model.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace fathom::hardware {

// The groups that run each transfer on them at the same time (a replay that simulates one rank of
// many runs every group of a kind at once). NCCL sets a communicator's connections up once and
// each collective on it uses them, so a flow network routes a communicator's flows once per
// collective and algorithm, and a connection keeps its path. `groups` is listed on demand, by a
// backend that routes communicators, and only inside add_communicator(): a closed form never asks,
// and listing the thousands of groups of a large cluster would cost it more than its whole replay.
// A communicator's transfers run one at a time (the tasks of one stream), but for those started
// outside graphs, which may overlap.
struct Communicator {
    std::function<std::vector<CommGroup>()> groups;
    // The collective of the transfers that will start() on it outside graphs: a flow network routes
    // it when the communicator is declared (it takes no new routes once transfers run). None: it
    // carries tasks only, routed as they are carried.
    std::optional<Collective> outside;
};

// One transfer a communication task moves on `communicator`, `count` times in a row, each time the
// part `share` of it: a transfer that the pricing splits between a task hidden beside compute and a
// task exposed after it is carried by both, each with its share of its bytes and fixed part.
struct TransferPart {
    Transfer transfer;
    int communicator = -1;
    double share = 1;
    int count = 1;
};

// The size a flow network routes a communicator's transfers outside graphs at.
inline constexpr double kReferenceBytes = 256.0 * 1024 * 1024;

class TransferTimer : public sim::TaskTimer {
public:
    // Whether carry() does anything: a timer that ends tasks itself. The closed form does not (a
    // graph ends a task after its planned cost by itself), so a workload need not list its tasks.
    virtual bool times_tasks() const = 0;
    // Declares a communicator, before the first run(); returns its id.
    virtual int add_communicator(const Communicator& c) = 0;
    // Task `task` of `graph` moves `parts`, one after another in this order; the timer ends it (a
    // timer that decides ends itself attaches to the graph: sim::TaskGraph::set_timer).
    virtual void carry(sim::TaskGraph& graph, sim::TaskId task, const std::vector<TransferPart>& parts) = 0;
    // A transfer outside any task graph (a serving run's KV cache moving between replicas) starting
    // now on `communicator` (each of its groups moves transfer.bytes); `done` runs when it has
    // arrived. Transfers on one communicator at once share its links.
    virtual void start(const Transfer& transfer, int communicator, sim::Simulator::Handler done) = 0;
    // Runs the engine and the network together until both are idle.
    virtual void run() = 0;
    // Transfers that moved as flows sharing the fabric, and their flows: of `graph`, or of
    // everything (transfers only).
    virtual uint64_t flow_transfers(const sim::TaskGraph& graph) const = 0;
    virtual uint64_t flows(const sim::TaskGraph& graph) const = 0;
    virtual uint64_t flow_transfers() const = 0;
};

}  // namespace fathom::hardware
