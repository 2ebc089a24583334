#pragma once
// The per-request half of a serving report, collected as the simulation runs: latencies of the
// measured requests, their SLO attainment (each against its class's targets), token counts,
// prefix hits, preemptions and, when asked, one record per request. The simulator decides which
// requests are measured (warm-up excluded) and calls in; the replica-side aggregates (KV use,
// batch sizes, iterations) stay with the simulator.
#include "workloads/serving/sequence.h"
#include "workloads/serving/serving_metrics.h"
#include "workloads/serving/serving_plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::workloads::serving {

class RequestMetrics {
public:
    // `class_names` is the traffic source's slo_classes(): it may grow while the source is read,
    // and must outlive this object.
    RequestMetrics(const SloSettings& slo, const std::vector<std::string>& class_names, bool keep_records);

    void arrived(double t);  // a measured request arrived (the first opens the window)
    void token_gap(double seconds) { itl_.add(seconds); }
    void kv_transfer(double seconds) { transfer_.push_back(seconds); }
    void finished(const Sequence& s, double t);  // a measured request's last token at time t

    int64_t measured() const { return measured_; }
    // Fills the request-side fields of `rep` (requests through prefix_hit_rate, slo_classes,
    // slo_class_names, records). Call once, at the end.
    void report(ServingReport& rep);

private:
    struct ClassStats {
        double ttft_s = 0, tpot_s = 0;  // this class's SLOs (0: not constrained)
        int64_t requests = 0, met = 0;
        std::vector<double> ttft, tpot;
    };
    ClassStats& class_stats(int32_t index);  // creates the stats of every class named so far
    const SloClass* listed(const std::string& name) const;

    const SloSettings& slo_;
    const std::vector<std::string>& class_names_;
    bool keep_records_;
    std::vector<ClassStats> classes_;
    LogHistogram itl_;
    std::vector<double> ttft_, ttft_service_, queue_, tpot_, e2e_, transfer_;
    std::vector<RequestRecord> records_;
    double first_arrival_ = -1, last_finish_ = 0;
    int64_t measured_ = 0, met_ = 0, prompt_tokens_ = 0, output_tokens_ = 0, hit_tokens_ = 0, preemptions_ = 0;
};

}  // namespace fathom::workloads::serving
