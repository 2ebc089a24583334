#include "workloads/metrics/serving_load.h"

#include <algorithm>

namespace fathom::workloads {

ReplicaUsageCollector::ReplicaUsageCollector(serving::ServingSignals& signals, std::vector<int64_t> kv_capacity) {
    for (int64_t c : kv_capacity) replicas_.push_back({c});
    signals.iteration.connect([this](const serving::IterationEvent& e) {
        ++iterations_;
        sequences_ += e.shape.sequences;
        tokens_ += e.shape.tokens();
        decodes_ += e.shape.decodes;
        busy_s_ += e.end.seconds() - e.start.seconds();
    });
    signals.kv_use.connect([this](const serving::KvUseEvent& e) { kv_use(e); });
}

void ReplicaUsageCollector::kv_use(const serving::KvUseEvent& e) {
    Replica& r = replicas_[static_cast<size_t>(e.replica)];
    const double now = e.t.seconds();
    r.kv_area += r.kv_last_used * (now - r.kv_last_t);
    r.kv_last_t = now;
    r.kv_last_used = static_cast<double>(e.used);
    r.kv_max = std::max(r.kv_max, r.kv_last_used);
}

void ReplicaUsageCollector::report(serving::ServingReport& rep, sim::Time end_time) const {
    const double end = end_time.seconds();
    double util = 0, util_max = 0;
    for (const Replica& r : replicas_) {
        const double area = r.kv_area + r.kv_last_used * (end - r.kv_last_t);
        const double cap = static_cast<double>(std::max<int64_t>(1, r.capacity));
        util += end > 0 ? area / end / cap : 0;
        util_max = std::max(util_max, r.kv_max / cap);
    }
    const double n = static_cast<double>(replicas_.size()), its = static_cast<double>(iterations_);
    rep.kv_utilization_mean = replicas_.empty() ? 0 : util / n;
    rep.kv_utilization_max = util_max;
    rep.iterations = iterations_;
    rep.batch_size_mean = its > 0 ? static_cast<double>(sequences_) / its : 0;
    rep.batch_tokens_mean = its > 0 ? static_cast<double>(tokens_) / its : 0;
    rep.batch_decodes_mean = its > 0 ? static_cast<double>(decodes_) / its : 0;
    rep.iteration_s_mean = its > 0 ? busy_s_ / its : 0;
}

RequestsInSystemCollector::RequestsInSystemCollector(serving::ServingSignals& signals) {
    signals.arrived.connect([this](const serving::Sequence& s) {
        ++arrived_;
        count(+1, s.arrival);
    });
    signals.finished.connect([this](const serving::Sequence&, sim::Time now) {
        ++finished_;
        count(-1, now);
    });
}

void RequestsInSystemCollector::count(int delta, sim::Time now) {
    const double t = now.seconds();
    if (start_ < 0) start_ = t;
    area_ += static_cast<double>(in_system_) * (t - last_t_);
    last_t_ = t;
    in_system_ += delta;
}

void RequestsInSystemCollector::report(serving::ServingReport& rep, int64_t warmup) const {
    rep.warmup_requests = std::min(warmup, arrived_);
    rep.mean_in_system = last_t_ > start_ ? area_ / (last_t_ - start_) : 0;
    rep.all_requests = finished_;
    rep.all_duration_s = last_t_ - std::max(0.0, start_);
}

}  // namespace fathom::workloads
