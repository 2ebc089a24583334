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
    auto mark = [&](std::vector<int>& v, sim::StreamId s) {
        if (v.size() <= s) v.resize(s + 1, -1);
        FATHOM_CHECK(v[s] < 0, "a stream registered twice for compute beside communication");
        v[s] = d;
    };
    mark(compute_of_, compute);
    for (sim::StreamId s : contending) mark(contends_with_, s);
}

void ComputeBesideComm::set_stretch(sim::TaskId compute_task, double stretch) {
    FATHOM_CHECK(stretch > 0, "compute stretch must be positive");
    if (stretch == 1.0 && stretch_.size() <= compute_task) return;
    if (stretch_.size() <= compute_task) stretch_.resize(compute_task + 1, 1.0f);
    stretch_[compute_task] = static_cast<float>(stretch);
}

void ComputeBesideComm::apply(const Device& d) {
    double s = 1.0;
    if (d.active > 0 && d.computing && d.running < stretch_.size()) s = stretch_[d.running];
    graph_.set_stretch(d.compute, s);
}

void ComputeBesideComm::started(const sim::TaskRecord& r) {
    if (r.stream < compute_of_.size() && compute_of_[r.stream] >= 0) {
        Device& d = devices_[static_cast<size_t>(compute_of_[r.stream])];
        d.running = r.id;
        d.computing = true;
        apply(d);
        return;
    }
    if (r.stream >= contends_with_.size() || contends_with_[r.stream] < 0 || r.end <= r.start) return;
    if (counted_.size() <= r.id) counted_.resize(r.id + 1, false);
    counted_[r.id] = true;
    Device& d = devices_[static_cast<size_t>(contends_with_[r.stream])];
    if (++d.active == 1) apply(d);
}

void ComputeBesideComm::finished(const sim::TaskRecord& r) {
    if (r.stream < compute_of_.size() && compute_of_[r.stream] >= 0) {
        Device& d = devices_[static_cast<size_t>(compute_of_[r.stream])];
        d.computing = false;
        apply(d);
        return;
    }
    if (r.id >= counted_.size() || !counted_[r.id]) return;
    counted_[r.id] = false;
    Device& d = devices_[static_cast<size_t>(contends_with_[r.stream])];
    if (--d.active == 0) apply(d);
}

}  // namespace fathom::workloads
