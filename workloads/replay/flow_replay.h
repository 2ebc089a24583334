#pragma once
// Communication tasks as flows on the network: the replay of a whole step (or of two jobs on one
// fabric) with the traffic of every parallel dimension sharing links, fathom's clock the master.
//
// Each communication stream of a device moves one traffic pattern (hardware/network/
// simgrid_network.h: FlowSession), e.g. every DP ring of a pipeline stage, routed once. A task of
// that stream priced at D seconds (the workload's cost, which assumed the pattern alone) starts an
// instance of the pattern whose bytes are scaled so that, alone, it would take D: with the pattern's
// reference call priced R for its declared bytes and a fixed part F (launch, latencies), the scale
// is (D - F) / (R - F); the task ends when its last flow ends, plus F. A task no longer than F moves
// nothing and keeps D, and so does a task whose pattern shares no link with any other (a TP group
// inside its node, where no other traffic goes): alone is all it can be, and its stream runs one
// task at a time (a pattern must serve one stream). Tasks of other streams (compute) keep their
// durations.
//
// So an uncontended replay gives back the priced step, and contention comes out of the simulation:
// a DP reduce-scatter sharing a leaf uplink with another stage's all-gather, or with another job's,
// runs at its max-min share for as long as they overlap.
//
// The run loop: before the engine runs the events of its next time, the flows advance to that time
// (FlowSession::advance stops early at an instance's end, which schedules the task's completion).
#include "hardware/network/simgrid_network.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace fathom::workloads {

class FlowReplay final : public sim::TaskTimer {
public:
    FlowReplay(sim::Simulator& sim, hardware::FlowSession& session) : sim_(sim), session_(session) {}
    FlowReplay(const FlowReplay&) = delete;
    FlowReplay& operator=(const FlowReplay&) = delete;

    // Tasks of `graph` on `stream` move `pattern` (declared on the session), whose calls are priced
    // `reference_s` seconds alone. Attaches this replay as the graph's timer (once per graph).
    void route(sim::TaskGraph& graph, sim::StreamId stream, int pattern, double reference_s);
    // One task moves `pattern` instead of its stream's (a pipeline send backward, not forward).
    void route_task(sim::TaskGraph& graph, sim::TaskId task, int pattern, double reference_s);
    // A transfer outside any task graph (a serving run's KV cache moving between replicas): an
    // instance of `pattern` starting now with its flows' bytes times `scale`; `on_end` runs `fixed`
    // seconds after its last flow ends. Instances of one pattern may overlap (they share its links).
    void start(int pattern, double scale, double fixed, sim::Simulator::Handler on_end);
    // Runs the engine and the network together until both are idle.
    void run();

    bool take(sim::TaskGraph& graph, const sim::TaskRecord& task, sim::Time duration) override;
    // Tasks (and start() transfers) that moved flows, and the flows they started: of all graphs,
    // or of one.
    uint64_t transfers() const;
    uint64_t transfers(const sim::TaskGraph& graph) const;
    uint64_t flows(const sim::TaskGraph& graph) const;

private:
    struct Route {
        int pattern = -1;
        double reference_s = 0;
    };
    struct Graph {
        sim::TaskGraph* graph = nullptr;
        std::unordered_map<sim::StreamId, Route> streams;
        std::unordered_map<sim::TaskId, Route> tasks;
        uint64_t transfers = 0, flows = 0;
    };
    size_t index_of(sim::TaskGraph& graph);
    // Completions of instances that ended at `t`: their tasks complete after their fixed part.
    void ended(const std::vector<uint64_t>& tags);
    // Brings the session's clock to the engine's (it lags while nothing flows).
    void catch_up();

    sim::Simulator& sim_;
    hardware::FlowSession& session_;
    std::vector<Graph> graphs_;
    std::unordered_map<uint64_t, double> fixed_of_;  // running instance (graph << 32 | task) -> its fixed part
    // start() transfers, tagged from kDirect up: fixed part and completion.
    static constexpr uint64_t kDirect = uint64_t{1} << 63;
    std::unordered_map<uint64_t, std::pair<double, sim::Simulator::Handler>> direct_;
    uint64_t direct_next_ = kDirect, direct_transfers_ = 0;
};

}  // namespace fathom::workloads
