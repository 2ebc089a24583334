#pragma once
// A flow-level network solver: links with capacities, paths over them, and flows that start on a
// path at the current time and share the links max-min fairly while they run. fathom's clock is
// the master: the caller starts flows, asks the solver to run until a time of its own or the next
// completion, whichever comes first, and learns the completions in order.
//
// The implementation is SimGrid's (simgrid_solver.cpp, the one file that includes SimGrid), which
// allows one engine per process: every solver runs its SimGrid engine in a child process of its
// own, created when the first flow starts (the platform is fixed then), driven over a pipe. So any
// number of solvers may exist at once, in any threads. Flows that run alone on their links never
// reach it (make_lone_flow_solver below): a step's network replay is mostly such flows.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace fathom::hardware {

class FlowSolver {
public:
    virtual ~FlowSolver() = default;
    // Declared before the first start(): a link of `capacity` bytes/s, a path over link ids.
    virtual int add_link(double capacity) = 0;
    virtual int add_path(const std::vector<int>& links) = 0;
    // Starts `bytes` on `path` now; `tag` comes back from advance() when the flow ends.
    virtual void start(int path, double bytes, uint64_t tag) = 0;
    // Runs to `until` or to the next completion, whichever is first; returns the time reached and
    // sets `done` to the tags of the flows that ended at it (empty when `until` came first). With
    // `until` infinite, runs to the next completion; with no flow running, returns `until`.
    virtual double advance(double until, std::vector<uint64_t>& done) = 0;
    virtual double now() const = 0;
};

// SimGrid's CM02 max-min model with equal sharing: no TCP window (TCP-gamma 0), no cross-traffic
// of acknowledgements, link latencies kept outside SimGrid (CM02 weighs a flow's share by its
// round-trip time, which models TCP's RTT unfairness, not RDMA fabrics; fathom adds each
// collective's latency itself).
std::unique_ptr<FlowSolver> make_simgrid_solver();

// `inner` behind a shortcut for lone groups of flows (lone_flows.cpp): flows that start together
// on links no other flow uses share them max-min among themselves, computed without `inner`, until
// another flow comes onto one of their links; they then join `inner` with the bytes they have
// left. The same ends as `inner` alone but for the bytes so carried over, which `inner` rounds up
// to a whole byte (picoseconds), with far fewer flows in `inner` (most transfers of a step run
// alone).
std::unique_ptr<FlowSolver> make_lone_flow_solver(std::unique_ptr<FlowSolver> inner);

}  // namespace fathom::hardware
