// The capacity search's page: SLO attainment against the request rate, each seed's probes as one
// line, with the target attainment and the capacity found.
#include "tools/report/charts.h"
#include "tools/report/report.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fathom::report {

void add_capacity(Page& page, const nlohmann::json& r) {
    const double capacity = r.value("capacity_requests_per_s", 0.0), target = r.value("slo_target", 0.0);
    std::vector<std::vector<std::string>> rows = {
        {"capacity (median of the seeds)", num(capacity), "requests/s"},
        {"spread over the seeds", num(r.value("capacity_min", 0.0)) + " .. " + num(r.value("capacity_max", 0.0)),
         "requests/s"},
        {"offline throughput (all requests at time 0)", num(r.value("offline_requests_per_s", 0.0)), "requests/s"},
        {"SLO target", num(100 * target), "% of requests"}};
    if (r.contains("interval_90") && r["interval_90"].is_object())
        rows.push_back({"90% interval",
                        num(r["interval_90"].value("low", 0.0)) + " .. " + num(r["interval_90"].value("high", 0.0)),
                        "requests/s"});
    if (r.value("below_min_rate", false)) rows.push_back({"note", "even capacity.min_rate misses the SLOs", ""});
    if (r.value("above_max_rate", false)) rows.push_back({"note", "capacity.max_rate still meets the SLOs", ""});
    page.section("Capacity", "the highest request rate whose SLO attainment meets the target (bisection per seed)");
    page.table("capacity", {"figure", "value", "unit"}, rows);
    std::map<int64_t, std::vector<std::pair<double, double>>> by_seed;  // seed -> (rate, attainment %)
    double lo = 0, hi = 0;
    for (const auto& p : r.value("probes", nlohmann::json::array())) {
        const double rate = p.at("rate");
        by_seed[p.at("seed").get<int64_t>()].push_back({rate, 100 * p.at("slo_attainment").get<double>()});
        lo = lo == 0 ? rate : std::min(lo, rate);
        hi = std::max(hi, rate);
    }
    nlohmann::json data = nlohmann::json::array();
    size_t i = 0;
    for (auto& [seed, pts] : by_seed) {
        std::sort(pts.begin(), pts.end());
        std::vector<double> x, y;
        for (const auto& [a, b] : pts) {
            x.push_back(a);
            y.push_back(b);
        }
        data.push_back({{"type", "scatter"},
                        {"mode", "lines+markers"},
                        {"name", "seed " + std::to_string(seed)},
                        {"x", x},
                        {"y", y},
                        {"marker", {{"color", colour(i)}, {"size", 7}}},
                        {"line", {{"color", colour(i)}, {"width", 1}}}});
        ++i;
    }
    data.push_back(hline("target " + num(100 * target) + " %", 100 * target, lo, hi, "#C0392B"));
    data.push_back(vline("capacity " + num(capacity) + " requests/s", capacity, 0, 100, "#2C3E50"));
    page.section("SLO attainment against the request rate", "every rate the bisection simulated, per seed");
    page.chart("attainment", data,
               {{"title", {{"text", "SLO attainment against the request rate"}}},
                {"xaxis", {{"title", {{"text", "request rate (requests/s)"}}}}},
                {"yaxis", {{"title", {{"text", "requests meeting the SLOs (%)"}}}, {"range", {0, 102}}}}},
               420);
}

}  // namespace fathom::report
