#pragma once
// How loaded a serving system was, collected from the serving engine's signals
// (workloads/serving/serving_events.h):
//  - ReplicaUsageCollector: per replica, the iterations and their batch sizes, and the share of its
//    KV blocks referenced over time (time-weighted mean over the run, and the peak), averaged over
//    every simulated replica, idle ones included;
//  - RequestsInSystemCollector: all requests (warm-up included) arrived and not finished over time
//    (Little's law: its time-average), how many arrived and finished, and over which span.
// Seconds as in serving_requests.h: each engine time converted alone, differences in seconds.
#include "sim/time.h"
#include "workloads/serving/serving_events.h"
#include "workloads/serving/serving_metrics.h"

#include <cstdint>
#include <vector>

namespace fathom::workloads {

class ReplicaUsageCollector {
public:
    // `kv_capacity`: each replica's KV blocks, in the events' replica order. Attach before the run.
    ReplicaUsageCollector(serving::ServingSignals& signals, std::vector<int64_t> kv_capacity);
    ReplicaUsageCollector(const ReplicaUsageCollector&) = delete;  // the signals refer to it
    ReplicaUsageCollector& operator=(const ReplicaUsageCollector&) = delete;

    // Fills kv_utilization_mean and _max, iterations, batch_size_mean, batch_tokens_mean,
    // batch_decodes_mean and iteration_s_mean of a run that ended at `end`.
    void report(serving::ServingReport& rep, sim::Time end) const;

private:
    struct Replica {
        int64_t capacity = 0;
        double kv_area = 0, kv_last_t = 0, kv_last_used = 0, kv_max = 0;  // blocks x seconds, s, blocks
    };
    void kv_use(const serving::KvUseEvent& e);

    std::vector<Replica> replicas_;
    int64_t iterations_ = 0, sequences_ = 0, tokens_ = 0, decodes_ = 0;
    double busy_s_ = 0;  // sum of the iterations' durations
};

class RequestsInSystemCollector {
public:
    explicit RequestsInSystemCollector(serving::ServingSignals& signals);
    RequestsInSystemCollector(const RequestsInSystemCollector&) = delete;  // the signals refer to it
    RequestsInSystemCollector& operator=(const RequestsInSystemCollector&) = delete;

    int64_t arrived() const { return arrived_; }
    int64_t finished() const { return finished_; }
    // Fills mean_in_system, all_requests, all_duration_s and warmup_requests (of `warmup` asked for).
    void report(serving::ServingReport& rep, int64_t warmup) const;

private:
    void count(int delta, sim::Time now);

    double start_ = -1, area_ = 0, last_t_ = 0;  // seconds, requests x seconds, seconds
    int64_t in_system_ = 0, arrived_ = 0, finished_ = 0;
};

}  // namespace fathom::workloads
