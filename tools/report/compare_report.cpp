// The comparison's page: measured against predicted for every case that ran (log axes: the cases'
// units differ, a ratio does not), with the lines of equal value and of +-10% and +-25%, and the
// table of cases with their errors.
#include "tools/report/charts.h"
#include "tools/report/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace fathom::report {

void add_compare(Page& page, const nlohmann::json& cases) {
    std::map<std::string, nlohmann::json> by_kind;  // kind -> trace
    std::vector<std::string> kinds;
    double lo = 0, hi = 0;
    std::vector<double> errors;
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : cases) {
        const std::string status = c.value("status", ""), id = c.value("id", "");
        const double m = c.value("measured", 0.0), p = c.value("predicted", 0.0);
        const bool ok = status == "ok" && m > 0 && p > 0;
        rows.push_back({id, c.value("metric", ""), c.value("unit", ""), num(m), ok ? num(p) : "-",
                        ok ? num(100 * c.value("error", 0.0), 3) + " %" : "-", status});
        if (!ok) continue;
        const std::string kind = c.value("kind", "other");
        if (!by_kind.count(kind)) {
            kinds.push_back(kind);
            by_kind[kind] = {{"type", "scatter"},
                             {"mode", "markers"},
                             {"name", kind},
                             {"x", nlohmann::json::array()},
                             {"y", nlohmann::json::array()},
                             {"text", nlohmann::json::array()},
                             {"hovertemplate", "%{text}<extra></extra>"}};
        }
        auto& t = by_kind[kind];
        t["x"].push_back(m);
        t["y"].push_back(p);
        t["text"].push_back(id + "<br>" + c.value("metric", "") + ": measured " + num(m) + ", predicted " + num(p) +
                            " " + c.value("unit", "") + " (" + num(100 * c.value("error", 0.0), 3) + " %)");
        lo = lo == 0 ? std::min(m, p) : std::min({lo, m, p});
        hi = std::max({hi, m, p});
        errors.push_back(std::fabs(c.value("error", 0.0)));
    }
    std::sort(errors.begin(), errors.end());
    const double median = errors.empty() ? 0 : errors[errors.size() / 2];
    page.section("Predicted against measured", std::to_string(errors.size()) + " of " + std::to_string(cases.size()) +
                                                   " cases ran; median |error| " + num(100 * median, 3) + " %");
    nlohmann::json data = nlohmann::json::array();
    if (hi > 0) {
        const double a = lo / 1.5, b = hi * 1.5;
        data.push_back({{"type", "scatter"},
                        {"mode", "lines"},
                        {"name", "equal"},
                        {"x", {a, b}},
                        {"y", {a, b}},
                        {"hoverinfo", "skip"},
                        {"line", {{"color", "#555"}, {"width", 1}}}});
        for (const double f : {0.10, 0.25})
            for (const int s : {1, -1}) {
                const double k = 1 + s * f;
                data.push_back({{"type", "scatter"},
                                {"mode", "lines"},
                                {"name", (s > 0 ? "+" : "-") + num(100 * f) + " %"},
                                {"x", {a, b}},
                                {"y", {a * k, b * k}},
                                {"hoverinfo", "skip"},
                                {"showlegend", s > 0},
                                {"line", {{"color", f < 0.2 ? "#9AA5B1" : "#C8CFD8"}, {"dash", "dot"}, {"width", 1}}}});
            }
    }
    for (size_t i = 0; i < kinds.size(); ++i) {
        auto t = by_kind[kinds[i]];
        t["marker"] = {{"color", colour(i)}, {"size", 8}};
        data.push_back(t);
    }
    // Log axes over the same decades (plotly's log ranges are in log10 units).
    const nlohmann::json range =
        hi > 0 ? nlohmann::json{std::log10(lo / 1.5), std::log10(hi * 1.5)} : nlohmann::json{0, 1};
    page.chart("parity", data,
               {{"title", {{"text", "Predicted against measured, each case in its own unit"}}},
                {"xaxis", {{"type", "log"}, {"range", range}, {"title", {{"text", "measured"}}}}},
                {"yaxis", {{"type", "log"}, {"range", range}, {"title", {{"text", "predicted"}}}}}},
               560);
    page.section("Cases", "error = predicted / measured - 1");
    page.table("cases", {"case", "metric", "unit", "measured", "predicted", "error", "status"}, rows);
}

}  // namespace fathom::report
