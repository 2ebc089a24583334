#pragma once
// The network backend as the timer of communication tasks (SimGrid's and ASTRA-sim's contract): a
// communication task carries what it moves, a Transfer {collective, bytes, group}, and the network
// backend decides when it ends. A workload gets its timer from NetworkModel::timer() whatever the
// backend, declares the communicators its transfers run on, hands every communication task to the
// timer with its transfer, and runs the engine through the timer.
//
//   closed form (analytical network): a task ends at its start + the closed-form cost it was
//     planned with (the cost oracle's answer for its transfer, or for the part of it the task
//     holds); a transfer outside any task graph ends at now + its cost.
//   flows (SimGrid network): a task starts the flows of its transfer on its communicator's links
//     and ends when the last of them has arrived, plus the collective's fixed part (launch,
//     latencies); transfers that overlap in time share links max-min. The flows are scaled so that
//     alone a task takes its planned time (a task planned at D on a communicator whose reference
//     call of R has a fixed part F moves (D - F) / (R - F) of the reference call's bytes): an
//     uncontended replay gives the priced step back, and contention comes out of the simulation.
//     A transfer outside any task graph moves its own bytes.
//
// Units: seconds, bytes.
#include "hardware/network/network_model.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace fathom::hardware {

// The groups that run each transfer on them at the same time (a replay that simulates one rank of
// many runs every group of a kind at once), connected as `shape` connects them: a ring's
// neighbours, every pair for an all-to-all. NCCL sets a communicator's connections up once and
// each collective on it uses them, so a flow network routes a communicator once. `reference_s`:
// what the cost oracle that planned the tasks gives `shape` of kReferenceBytes on the first group
// (the flow network's scale for tasks; unused for transfers outside graphs). Both are listed on
// demand, by a backend that routes communicators, and only inside add_communicator(): a closed
// form never asks, and listing the thousands of groups of a large cluster would cost it more than
// its whole replay.
struct Communicator {
    Collective shape = Collective::AllReduce;
    std::function<std::vector<CommGroup>()> groups;
    std::function<double()> reference_s;
};

// The size a flow network routes a communicator's reference call at: large enough that every
// collective is in its bandwidth regime (its fixed part small).
inline constexpr double kReferenceBytes = 256.0 * 1024 * 1024;

class TransferTimer : public sim::TaskTimer {
public:
    // Whether carry() does anything: a timer that ends tasks itself. The closed form does not (a
    // graph ends a task after its planned cost by itself), so a workload need not list its tasks.
    virtual bool times_tasks() const = 0;
    // Declares a communicator, before the first run(); returns its id.
    virtual int add_communicator(const Communicator& c) = 0;
    // Task `task` of `graph` moves `transfer` on communicator `communicator`; the timer ends it (a
    // timer that decides ends itself attaches to the graph: sim::TaskGraph::set_timer).
    virtual void carry(sim::TaskGraph& graph, sim::TaskId task, const Transfer& transfer, int communicator) = 0;
    // A transfer outside any task graph (a serving run's KV cache moving between replicas) starting
    // now on `communicator` (each of its groups moves transfer.bytes); `done` runs when it has
    // arrived. Transfers on one communicator at once share its links.
    virtual void start(const Transfer& transfer, int communicator, sim::Simulator::Handler done) = 0;
    // Runs the engine and the network together until both are idle.
    virtual void run() = 0;
    // Transfers that moved as flows, and their flows: of `graph`, or of everything (transfers only).
    virtual uint64_t flow_transfers(const sim::TaskGraph& graph) const = 0;
    virtual uint64_t flows(const sim::TaskGraph& graph) const = 0;
    virtual uint64_t flow_transfers() const = 0;
};

}  // namespace fathom::hardware
