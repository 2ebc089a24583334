#pragma once
// The HTML report's pages (`fathom run|capacity|search|compare --html FILE`; not yet for RL searches), one builder per
// command (tools/report/<command>_report.cpp). Each adds its sections to a Page (page.h) from what
// the command computed: the JSON it writes with --json and, for `run`, the step's timeline (the
// Perfetto trace --trace writes) or the serving run's requests and time series. Nothing is
// recomputed here: a chart draws the numbers the text output and the JSON state.
#include "tools/report/page.h"
#include "workloads/metrics/serving_series.h"
#include "workloads/serving/serving_metrics.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fathom::report {

// A training step: headline figures (with their 90% intervals), the pipeline timeline per stage
// and stream, the time breakdown per stage and memory per stage against the device's capacity.
void add_training(Page& page, const nlohmann::json& result, const std::string& trace);
// A serving run: headline figures, latency percentiles and CDFs against the SLOs, throughput and
// KV occupancy over time, and the batches' composition over time.
void add_serving(Page& page, const nlohmann::json& result,
                 const std::vector<workloads::serving::RequestRecord>& records, const workloads::ServingSeries& series);
// An RL iteration: headline figures, the phases per pool on the timeline, seconds per phase, the
// rollout's and the update's figures.
void add_rl(Page& page, const nlohmann::json& result, const std::string& trace);
// A capacity search: SLO attainment against the request rate for every probe and seed.
void add_capacity(Page& page, const nlohmann::json& result);
// A plan search: the ranked table and the Pareto fronts of its objectives.
void add_search(Page& page, const nlohmann::json& result);
// A comparison with measurements: the parity plot (measured against predicted) with each case's
// error, and the table.
void add_compare(Page& page, const nlohmann::json& result);

}  // namespace fathom::report
