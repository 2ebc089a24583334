// The plan search's page: its tally, the ranked table (the first 30 plans) and the Pareto fronts
// the search marked (training: throughput against peak memory, goodput against cost per token;
// serving: goodput or capacity against cost or GPUs, output throughput against p90 TTFT), each over
// every evaluated plan.
#include "tools/report/charts.h"
#include "tools/report/report.h"

#include <algorithm>
#include <string>
#include <vector>

namespace fathom::report {

namespace {

struct Front {
    const char* flag;
    const char* x;
    const char* x_label;
    const char* y;
    const char* y_label;
    bool log_x = false;  // latencies spanning decades
};

bool has(const nlohmann::json& candidates, const char* key) {
    for (const auto& c : candidates)
        if (c.contains(key) && c[key].is_number()) return true;
    return false;
}

std::string cell(const nlohmann::json& c, const std::string& key) {
    if (!c.contains(key)) return "";
    const auto& v = c[key];
    if (v.is_number()) return num(v.get<double>());
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

void add_front(Page& page, const nlohmann::json& candidates, const Front& f, size_t n) {
    nlohmann::json ax = nlohmann::json::array(), ay = nlohmann::json::array(), at = nlohmann::json::array();
    std::vector<std::pair<double, double>> front;
    std::vector<std::string> front_text;
    for (const auto& c : candidates) {
        if (!c.contains(f.flag) || !c.contains(f.x) || !c.contains(f.y) || !c[f.x].is_number() || !c[f.y].is_number())
            continue;
        const std::string label = c.value("plan", c.value("layout", std::string()));
        ax.push_back(c[f.x]);
        ay.push_back(c[f.y]);
        at.push_back(label);
        if (c.value(f.flag, false)) front.push_back({c[f.x].get<double>(), c[f.y].get<double>()});
    }
    std::sort(front.begin(), front.end());
    std::vector<double> fx, fy;
    for (const auto& [x, y] : front) {
        fx.push_back(x);
        fy.push_back(y);
    }
    const std::string id = std::string("pareto-") + std::to_string(n);
    page.chart(id,
               {{{"type", "scatter"},
                 {"mode", "markers"},
                 {"name", "evaluated plans"},
                 {"x", ax},
                 {"y", ay},
                 {"text", at},
                 {"hovertemplate", "%{text}<extra></extra>"},
                 {"marker", {{"color", "#B8C2CC"}, {"size", 5}}}},
                {{"type", "scatter"},
                 {"mode", "lines+markers"},
                 {"name", "Pareto front"},
                 {"x", fx},
                 {"y", fy},
                 {"marker", {{"color", colour(1)}, {"size", 9}}},
                 {"line", {{"color", colour(1)}, {"shape", "hv"}}}}},
               {{"title", {{"text", std::string(f.y_label) + " against " + f.x_label}}},
                {"xaxis", {{"title", {{"text", f.x_label}}}, {"type", f.log_x ? "log" : "linear"}}},
                {"yaxis", {{"title", {{"text", f.y_label}}}}}},
               420);
}

}  // namespace

void add_search(Page& page, const nlohmann::json& r) {
    const nlohmann::json& candidates = r.at("candidates");
    page.section("Search", "objective " + r.value("objective", std::string("-")) + ": " +
                               std::to_string(r.value("candidates_total", int64_t{0})) + " candidates, " +
                               std::to_string(r.value("evaluated", int64_t{0})) + " evaluated, " +
                               std::to_string(r.value("out_of_memory", int64_t{0})) + " out of memory, " +
                               std::to_string(r.value("pruned", int64_t{0})) + " pruned by plan checks");
    const bool serving = has(candidates, "output_tokens_per_s");
    const std::vector<std::string> wanted = serving ? std::vector<std::string>{"layout",
                                                                               "policy",
                                                                               "gpus",
                                                                               "slo_attainment",
                                                                               "goodput_requests_per_s",
                                                                               "capacity_requests_per_s",
                                                                               "output_tokens_per_s",
                                                                               "ttft_p90_s",
                                                                               "tpot_p90_s",
                                                                               "usd_per_hour"}
                                                    : std::vector<std::string>{"plan",
                                                                               "step_time_s",
                                                                               "tokens_per_s",
                                                                               "mfu",
                                                                               "peak_memory_gib",
                                                                               "goodput_tokens_per_s",
                                                                               "usd_per_million_tokens"};
    std::vector<std::string> columns;
    for (const auto& k : wanted)
        if (std::any_of(candidates.begin(), candidates.end(), [&](const auto& c) { return c.contains(k); }))
            columns.push_back(k);
    const std::vector<Front> fronts =
        serving ? std::vector<Front>{{"pareto_goodput_cost", has(candidates, "usd_per_hour") ? "usd_per_hour" : "gpus",
                                      has(candidates, "usd_per_hour") ? "cost (USD per hour)" : "GPUs",
                                      has(candidates, "capacity_requests_per_s") ? "capacity_requests_per_s"
                                                                                 : "goodput_requests_per_s",
                                      has(candidates, "capacity_requests_per_s") ? "capacity (requests/s)"
                                                                                 : "goodput (requests/s)"},
                                     {"pareto_throughput_ttft", "ttft_p90_s", "p90 TTFT (s)", "output_tokens_per_s",
                                      "output tokens/s", true}}
                : std::vector<Front>{{"pareto_throughput_memory", "peak_memory_gib", "peak memory (GiB per GPU)",
                                      "tokens_per_s", "tokens/s"},
                                     {"pareto_goodput_cost", "usd_per_million_tokens", "cost (USD per million tokens)",
                                      "goodput_tokens_per_s", "goodput (tokens/s)"}};
    page.section("Pareto fronts", "grey: every evaluated plan; the line: the plans no other beats on both axes");
    size_t n = 0;
    for (const Front& f : fronts)
        if (has(candidates, f.x) && has(candidates, f.y)) add_front(page, candidates, f, n++);
    std::vector<std::vector<std::string>> rows;
    const nlohmann::json ranking = r.value("ranking", nlohmann::json::array());
    for (size_t i = 0; i < ranking.size() && i < 30; ++i) {
        const auto& c = candidates.at(ranking[i].get<size_t>());
        std::vector<std::string> row = {std::to_string(i + 1)};
        for (const auto& k : columns) row.push_back(cell(c, k));
        rows.push_back(row);
    }
    std::vector<std::string> header = {"rank"};
    header.insert(header.end(), columns.begin(), columns.end());
    page.section("Ranking", "the first " + std::to_string(rows.size()) + " of " + std::to_string(ranking.size()) +
                                " ranked plans");
    page.table("ranking", header, rows);
}

}  // namespace fathom::report
