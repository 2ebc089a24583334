// An RL iteration's page: headline figures, the phases on the timeline (the trace `--trace`
// writes: a process per pool), seconds per phase, and the rollout's and update's figures.
#include "tools/report/charts.h"
#include "tools/report/report.h"

#include <string>
#include <vector>

namespace fathom::report {

void add_rl(Page& page, const nlohmann::json& r, const std::string& trace) {
    page.section("Iteration", "the steady-state iteration over the simulated ones");
    const nlohmann::json staleness = r.value("staleness", nlohmann::json::object());
    page.table("headline", {"figure", "predicted", "unit"},
               {{"iteration time", num(r.value("iteration_time_s", 0.0)), "s"},
                {"samples", num(r.value("samples_per_s", 0.0)), "per s"},
                {"samples per GPU", num(r.value("samples_per_s_per_gpu", 0.0)), "per s"},
                {"response tokens", num(r.value("response_tokens_per_s", 0.0)), "per s"},
                {"staleness", num(staleness.value("mean", 0.0)) + " (max " + num(staleness.value("max", 0.0)) + ")",
                 "versions"}});
    if (!trace.empty())
        add_timeline(
            page, trace, 0,
            {"Phases", "every phase of every simulated iteration by pool", "Phases per pool", "time (s)", 1e6, "s"},
            [](const std::string& name) { return name; });
    // Seconds per phase; the rollout's long tail (after 90% of the answers) is part of the rollout.
    const nlohmann::json b = r.value("breakdown", nlohmann::json::object());
    const std::pair<const char*, const char*> phases[] = {{"rollout_s", "rollout"},
                                                          {"forward_s", "forward passes"},
                                                          {"update_s", "update"},
                                                          {"sync_s", "weight sync"},
                                                          {"offload_s", "offload/reload"}};
    std::vector<std::string> names;
    std::vector<double> seconds;
    for (const auto& [key, label] : phases)
        if (b.contains(key)) {
            names.push_back(label);
            seconds.push_back(b[key].get<double>());
        }
    page.section("Where the iteration goes", "mean seconds per phase; of the rollout, " +
                                                 num(b.value("long_tail_s", 0.0)) +
                                                 " s after 90% of the answers (the long tail)");
    page.chart(
        "phases",
        {{{"type", "bar"}, {"name", "seconds"}, {"x", names}, {"y", seconds}, {"marker", {{"color", colour(0)}}}}},
        {{"title", {{"text", "Seconds per phase"}}},
         {"xaxis", {{"type", "category"}}},
         {"yaxis", {{"title", {{"text", "seconds"}}}}},
         {"showlegend", false}},
        320);
    std::vector<std::vector<std::string>> rows;
    for (const char* part : {"rollout", "update"}) {
        const nlohmann::json x = r.value(part, nlohmann::json::object());
        for (const auto& [k, v] : x.items())
            if (v.is_number()) rows.push_back({part, k, num(v.get<double>())});
    }
    page.section("Rollout and update", "the rollout engines' serving figures and the trainer's update step");
    page.table("parts", {"part", "figure", "value"}, rows);
}

}  // namespace fathom::report
