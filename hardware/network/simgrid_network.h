#pragma once
// The flow-level network: the analytical model's choice of algorithm and its flows, put on the
// cluster's topology graph by a routing strategy and shared max-min fairly by SimGrid (through
// flow_solver.h, one child process per simulation). A collective asked of it runs together with
// every sibling group of its kind (network_model.h: sibling_groups), so DP rings on shared spines,
// ECMP collisions and oversubscribed uplinks come out of the simulation instead of a formula.
//
// Time of one call: the algorithm's fixed part (launch, latencies: the closed form with no bytes)
// plus the time until its last flow ends. collective() gives the slowest of the sibling calls (a
// step waits for all of them) and caches it per (operation, bytes, group). timer() runs a replay's
// communication tasks as flows on one session (flow_timer.cpp, transfer_timer.h).
#include "hardware/network/network_model.h"
#include "hardware/topology/topology.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fathom::hardware {

struct CollectiveCall {
    Collective op = Collective::AllReduce;
    double bytes = 0;
    CommGroup group;
    double start = 0;  // s
};

struct CallResult {
    std::string algorithm;
    double start = 0;
    double end = 0;  // s, when the call finished (its last flow, plus its fixed part)
    double seconds() const { return end - start; }
    int flows = 0;  // flows it was made of (after spraying splits them over paths)
};

// A live flow simulation on a network's topology, for a replay that starts transfers as it goes
// (the flow timer, flow_timer.cpp) with fathom's clock as the master. Patterns (sets of collective
// calls that run together, e.g. every DP ring of a pipeline stage) are declared first, and routed
// once; then instances of them start at the session's current time with their bytes scaled, and
// advance() reports the instances whose last flow ended (their fixed part is the caller's to add).
class FlowSession {
public:
    virtual ~FlowSession() = default;
    // Declares a pattern; only before the first start(). Calls of one rank or no bytes add nothing.
    // `owner`: the communicator it runs on, whose patterns run one at a time and reuse its
    // connections (a flow between two ranks keeps the route the owner's first flow between them
    // had, as a connection keeps its ECMP path); -1: an owner of its own.
    virtual int add_pattern(const std::vector<CollectiveCall>& calls, int owner) = 0;
    // The largest fixed part (launch, latencies) of the pattern's calls, s.
    virtual double fixed_seconds(int pattern) const = 0;
    // No pattern of another owner uses any of its links (so, its owner's transfers running one at
    // a time, it is never contended). Only after the last add_pattern().
    virtual bool isolated(int pattern) const = 0;
    // How long its flows take at scale 1 with nothing else on the fabric: they share their links
    // max-min among themselves, as a session shares them, until the last ends, s.
    virtual double alone_seconds(int pattern) const = 0;
    // Starts an instance of `pattern` now with every flow's bytes times `scale`; `tag` comes back
    // from advance() when its last flow ends (at once when it has none). Returns its flows.
    virtual size_t start(int pattern, double scale, uint64_t tag) = 0;
    // Runs to `until` or to the next instance's end, whichever is first (as FlowSolver::advance).
    virtual double advance(double until, std::vector<uint64_t>& done) = 0;
    virtual double now() const = 0;
    // Flows started so far (after spraying splits them over paths).
    virtual uint64_t flows_started() const = 0;
};

// The flow backend's own interface, for tools that ask for flows by name (tests, benchmarks,
// `fathom share`); workloads use NetworkModel only.
class FlowNetworkModel : public NetworkModel {
public:
    virtual std::unique_ptr<FlowSession> session() const = 0;
    // Runs these calls together in one simulation (each starting at its `start`).
    virtual std::vector<CallResult> run(const std::vector<CollectiveCall>& calls) const = 0;
    virtual const Topology& topology() const = 0;
};

// The timer of communication tasks on `session` (flow_timer.cpp): what FlowNetworkModel::timer()
// returns for a session of its own. `network` plans each transfer (its algorithm, flows and fixed
// part: NetworkModel::plan).
std::unique_ptr<TransferTimer> make_flow_timer(sim::Simulator& sim, const NetworkModel& network,
                                               std::unique_ptr<FlowSession> session);

// `routing`: a routing_registry() name; `algorithm` as for make_analytical_network.
std::unique_ptr<FlowNetworkModel> make_simgrid_network(const ClusterSpec& cluster, const std::string& routing = "ecmp",
                                                       const std::string& algorithm = "");

}  // namespace fathom::hardware
