#pragma once
// The per-request half of a serving report, collected from the serving engine's signals
// (workloads/serving/serving_events.h) as the simulation runs: latencies of the measured requests
// (ids from the warm-up count on), their SLO attainment (each against its class's targets), token
// counts, prefix hits, preemptions, KV transfer times and, when asked, one record per request.
//
// Seconds: each engine time is converted alone (sim::Time::seconds) and differences are taken in
// seconds (TTFT = first token - arrival), as the reports always have; a request never scheduled
// for a prefill (the decode pool alone received its KV) counts its scheduling time as -1.
#include "workloads/serving/serving_events.h"
#include "workloads/serving/serving_metrics.h"
#include "workloads/serving/serving_plan.h"

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace fathom::workloads {

class ServingRequestCollector {
public:
    // Subscribes to `signals`; attach before the engine runs. `class_names` is the traffic source's
    // slo_classes(): it may grow while the source is read, and must outlive this object.
    ServingRequestCollector(serving::ServingSignals& signals, const serving::SloSettings& slo,
                            const std::vector<std::string>& class_names, bool keep_records, int64_t warmup_requests);
    ServingRequestCollector(const ServingRequestCollector&) = delete;  // the signals refer to it
    ServingRequestCollector& operator=(const ServingRequestCollector&) = delete;

    int64_t measured() const { return measured_; }
    // Fills the request-side fields of `rep` (requests through prefix_hit_rate, slo_classes,
    // slo_class_names, records). Call once, at the end.
    void report(serving::ServingReport& rep);

private:
    struct ClassStats {
        double ttft_s = 0, tpot_s = 0;  // this class's SLOs (0: not constrained)
        int64_t requests = 0, met = 0;
        std::vector<double> ttft, tpot;
    };
    bool measured(const serving::Sequence& s) const { return s.req.id >= warmup_; }
    void next_tokens(const serving::TokensEvent& e);
    void note_gap(int64_t id, double gap);  // records: the longest gap of each request
    void finished(const serving::Sequence& s, sim::Time now);
    void warmup_finished(const serving::Sequence& s, sim::Time now);
    void record(const serving::Sequence& s, double t, double ttft, double tpot, bool met);
    ClassStats& class_stats(int32_t index);  // creates the stats of every class named so far
    const serving::SloClass* listed(const std::string& name) const;
    void report_classes(serving::ServingReport& rep, double duration);

    const serving::SloSettings& slo_;
    const std::vector<std::string>& class_names_;
    bool keep_records_;
    int64_t warmup_;
    std::vector<ClassStats> classes_;
    serving::LogHistogram itl_;
    std::vector<double> ttft_, ttft_service_, queue_, tpot_, e2e_, transfer_;
    std::unordered_map<int64_t, double> max_gap_;  // records only: longest gap between tokens, by id
    std::vector<serving::RequestRecord> records_;
    double first_arrival_ = -1, last_finish_ = 0;
    int64_t measured_ = 0, met_ = 0, prompt_tokens_ = 0, output_tokens_ = 0, hit_tokens_ = 0, preemptions_ = 0;
    int64_t offload_hit_tokens_ = 0, ssd_hit_tokens_ = 0, store_hit_tokens_ = 0;
    std::array<std::vector<double>, 5> tier_ttft_;  // none, gpu, host, nvme, store (ServingReport::ttft_by_tier)
    // Warm-up requests' work inside the measurement window (rates only; latencies leave them out).
    int64_t warmup_finished_ = 0, warmup_prompt_ = 0, warmup_output_ = 0;
};

}  // namespace fathom::workloads
