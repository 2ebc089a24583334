#pragma once
// What a serving simulation reports: per-request records and their aggregates.
//
// Latency conventions (sources differ; each figure says which it is):
//   ttft   arrival -> first token, queueing included (vLLM/SGLang benchmark scripts, GenAI-Perf,
//          MLPerf); `ttft_service` excludes the queueing (first scheduled -> first token)
//   tpot   per request, (e2e - ttft) / (output tokens - 1): the first token excluded (vLLM's and
//          SGLang's TPOT, GenAI-Perf's and AIPerf's "inter token latency", MLPerf's TPOT); requests
//          of one output token have none
//   itl    every gap between consecutive tokens of a request, over all gaps of all requests (vLLM's
//          and SGLang's ITL)
//   e2e    arrival -> last token
// Percentiles of per-request figures are exact (linear interpolation between order statistics, as
// numpy.percentile); ITL percentiles come from a log histogram with 0.1% relative bins.
#include "workloads/replay/op_sources.h"
#include "workloads/serving/autoscale.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fathom::workloads::serving {

struct Percentiles {
    double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};
// Of a sample (sorted in place); all zero when empty.
Percentiles percentiles(std::vector<double>& v);

// Positive values in [1e-7, 1e4] s with 0.1% relative resolution; counts are weights.
class LogHistogram {
public:
    LogHistogram();
    void add(double x, int64_t count = 1);
    // `n` values x in a row: as n calls of add(x) (the same bins, count and sum, added in turn),
    // with one bin lookup.
    void add_repeated(double x, int64_t n);
    int64_t count() const { return count_; }
    double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
    double max() const { return max_; }
    double quantile(double q) const;  // q in [0, 1]
    Percentiles summary() const;

private:
    std::vector<int64_t> bins_;
    int64_t count_ = 0;
    double sum_ = 0, max_ = 0;
};

struct RequestRecord {
    int64_t id = 0;
    int32_t replica = -1;         // where it was prefilled (aggregated: served)
    int32_t decode_replica = -1;  // disaggregated: where it was decoded
    int32_t slo_class = 0;
    double arrival_s = 0, queue_s = 0, ttft_s = 0, ttft_service_s = 0, tpot_s = 0, e2e_s = 0, max_itl_s = 0;
    double kv_transfer_s = 0;
    int64_t prompt_tokens = 0, output_tokens = 0, generated_tokens = 0, prefix_hit_tokens = 0;
    int32_t preemptions = 0;
    bool slo_met = true;
};

// The requests of one SLO class (a trace's slo_class), against that class's SLOs.
struct SloClassReport {
    std::string name;
    double slo_ttft_s = 0, slo_tpot_s = 0;  // 0: not constrained
    int64_t requests = 0;
    double slo_attainment = 0;
    double goodput_requests_per_s = 0;  // over the run's duration
    Percentiles ttft_s, tpot_s;
};

struct ServingReport {
    int64_t requests = 0;  // measured requests (after the warm-up ones)
    int64_t warmup_requests = 0;
    int gpus = 0;
    double duration_s = 0;  // first measured arrival -> last measured completion
    double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, total_tokens_per_s = 0;
    Percentiles ttft_s, ttft_service_s, queue_s, tpot_s, itl_s, e2e_s, kv_transfer_s;
    double slo_ttft_s = 0, slo_tpot_s = 0;
    double slo_attainment = 1;  // share of measured requests meeting both SLOs (each its class's)
    double goodput_requests_per_s = 0;
    int64_t preemptions = 0;
    int64_t prefix_hit_tokens = 0;
    double prefix_hit_rate = 0;  // prompt tokens found in the prefix cache / prompt tokens
    // KV offloading: prompt tokens loaded back from the tier below the GPU (after the prefix-cache
    // hits) and their share of the prompt tokens (-1: no offload tier).
    int64_t offload_hit_tokens = 0;
    double offload_hit_rate = -1;
    double offload_ssd_hit_rate = -1;  // of those, from the NVMe tier (-1: none)
    double store_hit_rate = -1;        // of those, from the store the replicas share (-1: none)
    // With a KV tier: TTFT by where each request's prompt prefix came from, the deepest place it
    // loaded from ("store", "nvme", "host"), else "gpu" (GPU hits alone) or "none"; groups with
    // requests only, in that order from "none".
    struct TierTtft {
        std::string source;
        int64_t requests = 0;
        Percentiles ttft_s;
    };
    std::vector<TierTtft> ttft_by_tier;
    double kv_utilization_mean = 0;  // time-weighted share of KV blocks referenced, mean over replicas
    double kv_utilization_max = 0;
    double batch_size_mean = 0;     // sequences per iteration
    double batch_tokens_mean = 0;   // tokens per iteration
    double batch_decodes_mean = 0;  // of them, decode tokens (one per generating sequence)
    double iteration_s_mean = 0;    // an iteration's duration, start to end, averaged over iterations
    double mean_in_system = 0;      // time-average of requests arrived and not finished (all requests)
    int64_t all_requests = 0;       // requests finished, warm-up included
    double all_duration_s = 0;      // first arrival -> last completion, warm-up included
    int64_t iterations = 0;
    uint64_t events = 0;
    int64_t cost_cache_entries = 0;
    // Multi-LoRA: adapters loaded into GPU slots over the host link (all replicas; -1: LoRA off).
    int64_t lora_loads = -1;
    std::optional<AutoscaleReport> autoscale;  // with serving.autoscale: GPU-hours, replicas held
    OpSources op_sources;                      // how each op class was priced (table, roofline outside its range)
    int64_t kv_blocks_per_replica = 0;         // aggregated or decode pool
    double kv_tokens_per_replica = 0;
    double weight_bytes_per_gpu = 0;
    // Per class, in the order the traffic names them, then the classes of slo.classes no request
    // had; a class without requests is listed only if slo.classes names it. Present when the
    // traffic names a class other than "default" or the scenario gives slo.classes.
    std::vector<SloClassReport> slo_classes;
    std::vector<std::string> slo_class_names;  // the traffic's class names, by RequestRecord::slo_class
    std::vector<RequestRecord> records;        // all requests in id order, when asked for
};

// The per-request CSV (`fathom run --requests FILE`).
// `classes` names the slo_class indices (the traffic's slo_classes()).
std::string request_csv_header();
std::string request_csv_row(const RequestRecord& r, const std::vector<std::string>& classes);

}  // namespace fathom::workloads::serving
