#include "workloads/metrics/stream_busy.h"

#include <algorithm>

namespace fathom::workloads {
namespace {

// Measure of the union of intervals sorted by start.
double union_measure(const std::vector<std::pair<double, double>>& iv) {
    double total = 0, cur_s = -1, cur_e = -1;
    for (const auto& [s, e] : iv) {
        if (s > cur_e) {
            if (cur_e > cur_s) total += cur_e - cur_s;
            cur_s = s;
            cur_e = e;
        } else {
            cur_e = std::max(cur_e, e);
        }
    }
    if (cur_e > cur_s) total += cur_e - cur_s;
    return total;
}

}  // namespace

StreamBusyCollector::StreamBusyCollector(sim::TaskGraph& graph) {
    graph.on_finish.connect([this](const sim::TaskRecord& r) {
        if (r.stream >= busy_.size()) busy_.resize(r.stream + 1);
        if (r.end > r.start) busy_[r.stream].emplace_back(r.start.seconds(), r.end.seconds());
        makespan_ = std::max(makespan_, r.end.seconds());
    });
}

double StreamBusyCollector::busy_s(sim::StreamId stream) const {
    double t = 0;
    if (stream < busy_.size())
        for (const auto& [a, b] : busy_[stream]) t += b - a;
    return t;
}

double StreamBusyCollector::union_s(const std::vector<sim::StreamId>& streams) const {
    // A stream runs its tasks one at a time, in order: its intervals are disjoint and sorted, so one
    // stream's union is its busy time and several streams' lists merge without a sort.
    if (streams.size() == 1) return busy_s(streams.front());
    std::vector<std::pair<double, double>> all;
    for (sim::StreamId s : streams) {
        if (s >= busy_.size()) continue;
        const auto middle = static_cast<std::ptrdiff_t>(all.size());
        all.insert(all.end(), busy_[s].begin(), busy_[s].end());
        std::inplace_merge(all.begin(), all.begin() + middle, all.end());
    }
    return union_measure(all);
}

DeviceUtilization device_utilization(const StreamBusyCollector& c, sim::StreamId compute,
                                     const std::vector<sim::StreamId>& comm) {
    DeviceUtilization u;
    std::vector<sim::StreamId> all{compute};
    all.insert(all.end(), comm.begin(), comm.end());
    for (sim::StreamId s : all) u.busy_s.push_back(c.busy_s(s));
    const double any = c.union_s(all);
    u.idle_s = c.makespan_s() - any;
    u.exposed_comm_s = any - c.union_s({compute});
    return u;
}

}  // namespace fathom::workloads
