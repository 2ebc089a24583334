#include "workloads/replay/compute_beside_comm.h"

#include "sim/error.h"

namespace fathom::workloads {

ComputeBesideComm::ComputeBesideComm(sim::TaskGraph& graph) : graph_(graph) {
    graph_.on_start.connect([this](const sim::TaskRecord& r) { started(r); });
    graph_.on_finish.connect([this](const sim::TaskRecord& r) { finished(r); });
}

void ComputeBesideComm::add_device(sim::StreamId compute, const std::vector<sim::StreamId>& contending) {
    const int d = static_cast<int>(devices_.size());
    devices_.push_back(Device{compute});
    for (sim::StreamId s : contending) {
        if (contends_with_.size() <= s) contends_with_.resize(s + 1, -1);
        FATHOM_CHECK(contends_with_[s] < 0, "a stream registered twice for compute beside communication");
        contends_with_[s] = d;
    }
}

void ComputeBesideComm::set_stretch(sim::TaskId compute_task, double stretch) {
    if (stretch != 1.0) graph_.set_contended_stretch(compute_task, stretch);
}

void ComputeBesideComm::started(const sim::TaskRecord& r) {
    if (r.stream >= contends_with_.size() || contends_with_[r.stream] < 0 || r.end <= r.start) return;
    if (counted_.size() <= r.id) counted_.resize(r.id + 1, false);
    counted_[r.id] = true;
    Device& d = devices_[static_cast<size_t>(contends_with_[r.stream])];
    if (++d.active == 1) graph_.set_contended(d.compute, true);
}

void ComputeBesideComm::finished(const sim::TaskRecord& r) {
    if (r.id >= counted_.size() || !counted_[r.id]) return;
    counted_[r.id] = false;
    Device& d = devices_[static_cast<size_t>(contends_with_[r.stream])];
    if (--d.active == 0) graph_.set_contended(d.compute, false);
}

}  // namespace fathom::workloads
