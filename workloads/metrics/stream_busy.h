#pragma once
// A metric collector subscribed to a task graph's on_finish signal (sim/task_graph.h): it records
// when each stream was busy and when the last task ended, and answers utilization questions about
// a device (a group of streams) afterwards. Workloads never fill metrics themselves; they attach
// collectors like this one before running the engine.
#include "sim/task_graph.h"

#include <utility>
#include <vector>

namespace fathom::workloads {

class StreamBusyCollector {
public:
    // Subscribes to `graph`; attach before the graph starts.
    explicit StreamBusyCollector(sim::TaskGraph& graph);

    double makespan_s() const { return makespan_; }                   // end of the last task
    double busy_s(sim::StreamId stream) const;                        // total busy time of one stream
    double union_s(const std::vector<sim::StreamId>& streams) const;  // time any of them was busy
    // (Streams run their tasks in order, so each stream's intervals arrive disjoint and sorted.)

private:
    std::vector<std::vector<std::pair<double, double>>> busy_;  // per stream, [start, end) in seconds
    double makespan_ = 0;
};

// How one device (a compute stream and its communication streams) spent a run of `makespan_s`.
struct DeviceUtilization {
    std::vector<double> busy_s;  // per stream, in the order given (compute first)
    double idle_s = 0;           // nothing running on the device (pipeline bubble)
    double exposed_comm_s = 0;   // some communication stream busy while compute is idle
};
DeviceUtilization device_utilization(const StreamBusyCollector& c, sim::StreamId compute,
                                     const std::vector<sim::StreamId>& comm);

}  // namespace fathom::workloads
