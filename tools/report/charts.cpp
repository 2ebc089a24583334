#include "tools/report/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fathom::report {

std::string num(double x, int digits) {
    if (std::isnan(x)) return "-";
    char b[64];
    if (std::fabs(x) >= std::pow(10.0, digits) && std::fabs(x) < 1e15) std::snprintf(b, sizeof b, "%.0f", x);
    else std::snprintf(b, sizeof b, "%.*g", digits, x);
    return b;
}

std::string colour(size_t i) {
    static const char* const palette[] = {"#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2",
                                          "#EECA3B", "#FF9DA6", "#9D755D", "#BAB0AC", "#2F4B7C", "#A05195"};
    return palette[i % (sizeof palette / sizeof palette[0])];
}

nlohmann::json cdf_trace(const std::string& name, std::vector<double> values, double scale, size_t max_points) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    std::vector<double> xs, ys;
    const size_t points = std::min(n, std::max<size_t>(max_points, 2));
    for (size_t k = 0; k < points; ++k) {
        const size_t i = points == n ? k : (points > 1 ? k * (n - 1) / (points - 1) : 0);
        xs.push_back(values[i] * scale);
        ys.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
    }
    return {{"type", "scatter"}, {"mode", "lines"}, {"name", name}, {"x", xs}, {"y", ys}, {"line", {{"shape", "hv"}}}};
}

Bins make_bins(double t0, double t1, size_t n) {
    Bins b;
    n = std::max<size_t>(n, 1);
    b.t0 = t0;
    b.width = t1 > t0 ? (t1 - t0) / static_cast<double>(n) : 1.0;
    for (size_t i = 0; i < n; ++i) b.centres.push_back(t0 + (static_cast<double>(i) + 0.5) * b.width);
    b.sums.assign(n, 0);
    b.counts.assign(n, 0);
    return b;
}

void add_to_bin(Bins& b, double t, double weight) {
    const double k = std::floor((t - b.t0) / b.width);
    if (!(k >= 0) || k >= static_cast<double>(b.sums.size())) {
        // The end of the last bin belongs to it (the run's last event).
        if (t == b.t0 + b.width * static_cast<double>(b.sums.size()) && !b.sums.empty()) {
            b.sums.back() += weight;
            b.counts.back() += 1;
        }
        return;
    }
    b.sums[static_cast<size_t>(k)] += weight;
    b.counts[static_cast<size_t>(k)] += 1;
}

std::vector<std::string> headline_row(const nlohmann::json& r, const std::string& key, const std::string& label,
                                      const std::string& unit, double scale) {
    std::string band = "-";
    if (r.contains("interval_90") && r["interval_90"].contains(key)) {
        const nlohmann::json& b = r["interval_90"][key];
        if (b.contains("low") && b.contains("high"))
            band = num(b["low"].get<double>() * scale) + " .. " + num(b["high"].get<double>() * scale);
    }
    return {label, num(r.value(key, 0.0) * scale), unit, band};
}

namespace {

nlohmann::json dashed(const std::string& name, std::vector<double> x, std::vector<double> y, const std::string& c) {
    return {{"type", "scatter"},
            {"mode", "lines"},
            {"name", name},
            {"x", std::move(x)},
            {"y", std::move(y)},
            {"hoverinfo", "name"},
            {"line", {{"dash", "dash"}, {"color", c}, {"width", 1.5}}}};
}

}  // namespace

nlohmann::json vline(const std::string& name, double x, double y0, double y1, const std::string& c) {
    return dashed(name, {x, x}, {y0, y1}, c);
}

nlohmann::json hline(const std::string& name, double y, double x0, double x1, const std::string& c) {
    return dashed(name, {x0, x1}, {y, y}, c);
}

}  // namespace fathom::report
