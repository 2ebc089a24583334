// The serving run's page: headline figures, latency percentiles and CDFs against the SLOs (from the
// measured requests), and throughput, KV occupancy and batch composition over time (from the
// engine's per-batch samples, workloads/metrics/serving_series.h).
#include "tools/report/charts.h"
#include "tools/report/report.h"

#include <algorithm>
#include <string>
#include <vector>

namespace fathom::report {

namespace {

using workloads::ServingSeries;
using workloads::serving::RequestRecord;

constexpr size_t kBins = 100;

void add_latency_table(Page& page, const nlohmann::json& r) {
    std::vector<std::vector<std::string>> rows;
    const std::pair<const char*, const char*> keys[] = {{"ttft_ms", "TTFT (queueing included)"},
                                                        {"queue_ms", "queueing"},
                                                        {"tpot_ms", "TPOT (first token out)"},
                                                        {"itl_ms", "ITL (every gap)"},
                                                        {"e2e_latency_s", "end to end"}};
    for (const auto& [key, label] : keys) {
        if (!r.contains(key)) continue;
        const double scale = std::string(key) == "e2e_latency_s" ? 1e3 : 1.0;
        const auto& p = r[key];
        std::vector<std::string> row = {label};
        for (const char* q : {"mean", "p50", "p90", "p95", "p99", "max"}) row.push_back(num(p.value(q, 0.0) * scale));
        rows.push_back(row);
    }
    page.table("latency", {"latency (ms)", "mean", "p50", "p90", "p95", "p99", "max"}, rows);
}

// One latency's CDF over the measured requests, with its SLO (0: none) as a dashed line.
void add_cdf(Page& page, const std::string& id, const std::string& label, std::vector<double> values, double scale,
             const std::string& unit, double slo) {
    if (values.empty()) return;
    nlohmann::json data = nlohmann::json::array({cdf_trace(label, values, scale)});
    data[0]["line"]["color"] = colour(0);
    if (slo > 0) data.push_back(vline("SLO " + num(slo) + " " + unit, slo, 0, 1, "#C0392B"));
    page.chart(id, data,
               {{"title", {{"text", "Distribution of " + label + " over the measured requests"}}},
                {"xaxis", {{"title", {{"text", label + " (" + unit + ")"}}}, {"rangemode", "tozero"}}},
                {"yaxis", {{"title", {{"text", "share of requests"}}}, {"range", {0, 1.02}}}},
                {"showlegend", slo > 0}},
               300);
}

void add_kv(Page& page, const ServingSeries& series, double end, const std::vector<double>& centres);
void add_batches(Page& page, const ServingSeries& series, double end);

void add_over_time(Page& page, const ServingSeries& series) {
    double end = 0;
    for (const auto& it : series.iterations()) end = std::max(end, it.end_s);
    if (end <= 0) return;
    page.section("Over time", "the run cut in " + std::to_string(kBins) + " intervals of " + num(end / kBins, 3) +
                                  " s (warm-up requests included)");
    Bins tokens = make_bins(0, end, kBins);
    for (const auto& t : series.tokens()) add_to_bin(tokens, t.t_s, static_cast<double>(t.tokens));
    std::vector<double> rate;
    for (double s : tokens.sums) rate.push_back(s / tokens.width);
    page.chart("throughput",
               {{{"type", "scatter"},
                 {"mode", "lines"},
                 {"name", "output tokens/s"},
                 {"x", tokens.centres},
                 {"y", rate},
                 {"line", {{"color", colour(0)}}}}},
               {{"title", {{"text", "Output throughput"}}},
                {"xaxis", {{"title", {{"text", "time (s)"}}}}},
                {"yaxis", {{"title", {{"text", "output tokens/s"}}}}},
                {"showlegend", false}},
               280);
    add_kv(page, series, end, tokens.centres);
    add_batches(page, series, end);
}

// KV occupancy: each replica's peak share of its blocks in each interval (the last one carried over
// an interval without a batch); a line per replica up to 8, else their mean and maximum.
void add_kv(Page& page, const ServingSeries& series, double end, const std::vector<double>& centres) {
    const auto& cap = series.kv_capacity();
    std::vector<std::vector<double>> occ(cap.size(), std::vector<double>(kBins, -1));
    for (const auto& k : series.kv_use()) {
        if (k.replica < 0 || static_cast<size_t>(k.replica) >= cap.size() || cap[k.replica] <= 0) continue;
        const size_t b = std::min(kBins - 1, static_cast<size_t>(k.t_s / (end / kBins)));
        occ[k.replica][b] = std::max(occ[k.replica][b], 100.0 * static_cast<double>(k.used) / cap[k.replica]);
    }
    for (auto& row : occ)
        for (size_t b = 0; b < kBins; ++b)
            if (row[b] < 0) row[b] = b > 0 ? row[b - 1] : 0;
    nlohmann::json kv = nlohmann::json::array();
    if (occ.size() <= 8) {
        for (size_t i = 0; i < occ.size(); ++i)
            kv.push_back({{"type", "scatter"},
                          {"mode", "lines"},
                          {"name", "replica " + std::to_string(i)},
                          {"x", centres},
                          {"y", occ[i]},
                          {"line", {{"color", colour(i)}}}});
    } else {
        std::vector<double> mean(kBins, 0), most(kBins, 0);
        for (const auto& row : occ)
            for (size_t b = 0; b < kBins; ++b) {
                mean[b] += row[b] / static_cast<double>(occ.size());
                most[b] = std::max(most[b], row[b]);
            }
        kv.push_back({{"type", "scatter"},
                      {"mode", "lines"},
                      {"name", "mean of replicas"},
                      {"x", centres},
                      {"y", mean},
                      {"line", {{"color", colour(0)}}}});
        kv.push_back({{"type", "scatter"},
                      {"mode", "lines"},
                      {"name", "fullest replica"},
                      {"x", centres},
                      {"y", most},
                      {"line", {{"color", colour(1)}}}});
    }
    page.chart("kv", kv,
               {{"title", {{"text", "KV cache occupancy (each interval's peak)"}}},
                {"xaxis", {{"title", {{"text", "time (s)"}}}}},
                {"yaxis", {{"title", {{"text", "KV blocks in use (%)"}}}, {"rangemode", "tozero"}}}},
               300);
}

// Batch composition: mean prefill and decode tokens of the batches started in each interval.
void add_batches(Page& page, const ServingSeries& series, double end) {
    Bins pre = make_bins(0, end, kBins), dec = make_bins(0, end, kBins);
    for (const auto& it : series.iterations()) {
        add_to_bin(pre, it.start_s, static_cast<double>(it.prefill_tokens));
        add_to_bin(dec, it.start_s, it.decodes);
    }
    std::vector<double> p, d;
    for (size_t b = 0; b < kBins; ++b) {
        p.push_back(pre.counts[b] > 0 ? pre.sums[b] / pre.counts[b] : 0);
        d.push_back(dec.counts[b] > 0 ? dec.sums[b] / dec.counts[b] : 0);
    }
    page.chart(
        "batches",
        {{{"type", "bar"}, {"name", "decode tokens"}, {"x", pre.centres}, {"y", d}, {"marker", {{"color", colour(0)}}}},
         {{"type", "bar"},
          {"name", "prefill tokens"},
          {"x", pre.centres},
          {"y", p},
          {"marker", {{"color", colour(1)}}}}},
        {{"title", {{"text", "Batch composition"}}},
         {"barmode", "stack"},
         {"bargap", 0.05},
         {"xaxis", {{"title", {{"text", "time (s)"}}}}},
         {"yaxis", {{"title", {{"text", "tokens per batch (mean)"}}}}}},
        300);
}

}  // namespace

void add_serving(Page& page, const nlohmann::json& r, const std::vector<RequestRecord>& records,
                 const ServingSeries& series) {
    page.section("Run",
                 "measured requests (after the warm-up ones); predicted figures and, where fathom's "
                 "validation bands cover the plan, their 90% intervals");
    page.table("headline", {"figure", "predicted", "unit", "90% interval"},
               {headline_row(r, "requests", "requests measured", ""),
                headline_row(r, "requests_per_s", "throughput", "requests/s"),
                headline_row(r, "output_tokens_per_s", "output throughput", "tokens/s"),
                headline_row(r, "output_tokens_per_s_per_gpu", "output throughput per GPU", "tokens/s"),
                headline_row(r, "goodput_requests_per_s", "goodput (SLOs met)", "requests/s"),
                {"SLO attainment", num(100 * r.value("slo_attainment", 0.0)), "%", "-"}});
    page.section("Latency", r.value("latency_conventions", std::string()));
    add_latency_table(page, r);
    const nlohmann::json slo = r.value("slo", nlohmann::json::object());
    std::vector<double> ttft, tpot, e2e;
    for (const RequestRecord& q : records) {
        ttft.push_back(q.ttft_s);
        if (q.output_tokens > 1) tpot.push_back(q.tpot_s);
        e2e.push_back(q.e2e_s);
    }
    add_cdf(page, "ttft", "TTFT", ttft, 1e3, "ms", slo.value("ttft_ms", 0.0));
    add_cdf(page, "tpot", "TPOT", tpot, 1e3, "ms", slo.value("tpot_ms", 0.0));
    add_cdf(page, "e2e", "end-to-end latency", e2e, 1.0, "s", 0);
    add_over_time(page, series);
}

}  // namespace fathom::report
