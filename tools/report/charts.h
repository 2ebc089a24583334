#pragma once
// Small pieces the report's builders share: number formatting, empirical CDFs and time bins thinned
// to what a chart can show, and the palette.
#include "tools/report/page.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fathom::report {

// `x` with `digits` significant digits ("%.*g"); "-" for NaN.
std::string num(double x, int digits = 4);
// The i-th colour of the palette (cycling).
std::string colour(size_t i);

// The empirical CDF of `values` (times `scale`) as a line trace named `name`: every point when
// there are at most `max_points`, else `max_points` evenly spaced order statistics (the first and
// the last among them).
nlohmann::json cdf_trace(const std::string& name, std::vector<double> values, double scale, size_t max_points = 800);

// Fixed-width bins over [t0, t1): their centres, and sums of `weights` at `times` (times outside
// are left out).
struct Bins {
    double t0 = 0, width = 1;
    std::vector<double> centres;
    std::vector<double> sums;
    std::vector<double> counts;
};
Bins make_bins(double t0, double t1, size_t n);
void add_to_bin(Bins& b, double t, double weight);

// A table row {label, value x scale, unit, its 90% interval x scale or "-"} of the figure `key` of a
// --json result (interval_90.<key>.{low, high}, where the validation bands cover it).
std::vector<std::string> headline_row(const nlohmann::json& result, const std::string& key, const std::string& label,
                                      const std::string& unit, double scale = 1);

// A vertical line from y0 to y1 at x (a threshold: an SLO, a capacity) as a dashed line trace.
nlohmann::json vline(const std::string& name, double x, double y0, double y1, const std::string& colour);
nlohmann::json hline(const std::string& name, double y, double x0, double x1, const std::string& colour);

// A Perfetto trace (`--trace`'s) as the chart "timeline" of `page` under a section: a row per
// process and thread, a bar per task, a Plotly trace per kind (kind_of(task name)); tasks of one
// kind on a row less than a 1,500th of `span_s` apart (<= 0: the trace's end) drawn as one bar.
struct TimelineLabels {
    std::string heading, note, title, axis;
    double axis_us = 1e3;     // microseconds per unit of the time axis
    std::string unit = "ms";  // that unit, in the hover text
};
void add_timeline(Page& page, const std::string& trace, double span_s, const TimelineLabels& labels,
                  const std::function<std::string(const std::string&)>& kind_of);

}  // namespace fathom::report
