#pragma once
// Compute beside communication: a collective's kernels (NCCL's channels, one CTA each) hold SMs
// and HBM bandwidth on the device they run on, so compute that runs beside them slows while they
// overlap, whether or not the transfer itself is hidden (measured: hardware/calibration/README.md,
// "Compute beside communication"; H100 bf16 GEMM 1.21x, attention 1.09x beside 16 channels).
//
// An observer of a replay's task graph (sim/task_graph.h): per device, a compute stream and the
// communication streams whose tasks contend with it. While at least one of those runs a task (of
// nonzero length, or one a network timer holds), the compute stream is contended
// (sim::TaskGraph::set_contended), and its tasks run at their contended stretch: what a task's
// priced ops take beside a collective over their time alone (workloads/replay/program_cost.h,
// PassCost::beside_comm_stretch), set per task while the replay lays it. Tasks without one run
// unstretched.
#include "sim/task_graph.h"

#include <vector>

namespace fathom::workloads {

class ComputeBesideComm {
public:
    explicit ComputeBesideComm(sim::TaskGraph& graph);
    ComputeBesideComm(const ComputeBesideComm&) = delete;
    ComputeBesideComm& operator=(const ComputeBesideComm&) = delete;

    // A device: its compute stream and the communication streams that slow it.
    void add_device(sim::StreamId compute, const std::vector<sim::StreamId>& contending);
    // `compute_task` (not started) runs `stretch` times as long while it overlaps a collective.
    void set_stretch(sim::TaskId compute_task, double stretch);

private:
    struct Device {
        sim::StreamId compute = 0;
        int active = 0;  // contending tasks running
    };
    void started(const sim::TaskRecord& r);
    void finished(const sim::TaskRecord& r);

    sim::TaskGraph& graph_;
    std::vector<Device> devices_;
    std::vector<int> contends_with_;  // per stream: the device it slows, or -1
    std::vector<bool> counted_;       // per task: a contending task counted while it runs
};

}  // namespace fathom::workloads
