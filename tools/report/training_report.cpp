// The training step's page: headline figures, the pipeline timeline (from the step's Perfetto
// trace: a process per stage, a thread per stream), the time breakdown and memory per stage.
#include "tools/report/charts.h"
#include "tools/report/report.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fathom::report {

namespace {

// A task's kind, from the first word of its name in the trace ("F mb3 L2", "tp mb0", "dp-grad ...").
std::string task_kind(const std::string& name) {
    const std::string w = name.substr(0, name.find(' '));
    if (w == "F") return "forward";
    if (w == "B") return "backward";
    if (w == "W") return "weight gradients";
    if (w == "R") return "recompute";
    return w;
}

std::vector<std::string> stage_names(const nlohmann::json& stages) {
    std::vector<std::string> names;
    for (const auto& st : stages) names.push_back("stage " + std::to_string(st.value("stage", 0)));
    return names;
}

void add_breakdown(Page& page, const nlohmann::json& stages) {
    const auto names = stage_names(stages);
    nlohmann::json data = nlohmann::json::array();
    const std::pair<const char*, const char*> parts[] = {
        {"compute_s", "compute"}, {"exposed_comm_s", "exposed communication"}, {"idle_s", "idle (bubble)"}};
    size_t c = 0;
    for (const auto& [key, label] : parts) {
        std::vector<double> v;
        for (const auto& st : stages) v.push_back(st.value(key, 0.0));
        data.push_back(
            {{"type", "bar"}, {"name", label}, {"x", names}, {"y", v}, {"marker", {{"color", colour(c++)}}}});
    }
    page.section("Where the step goes", "per stage: compute, communication not hidden behind it, and idle time");
    page.chart("breakdown", data,
               {{"title", {{"text", "Step time per stage"}}},
                {"barmode", "stack"},
                {"yaxis", {{"title", {{"text", "seconds"}}}}},
                {"xaxis", {{"type", "category"}}}});
    // Each communication stream's busy time (hidden or not).
    nlohmann::json comm = nlohmann::json::array();
    std::vector<std::string> keys;
    for (const auto& st : stages)
        for (const auto& [k, v] : st.items())
            if (k != "exposed_comm_s" && k.size() > 7 && k.compare(k.size() - 7, 7, "_comm_s") == 0 && v.is_number() &&
                v.get<double>() > 0 && std::find(keys.begin(), keys.end(), k) == keys.end())
                keys.push_back(k);
    for (size_t i = 0; i < keys.size(); ++i) {
        std::vector<double> v;
        for (const auto& st : stages) v.push_back(st.value(keys[i], 0.0));
        comm.push_back({{"type", "bar"},
                        {"name", keys[i].substr(0, keys[i].size() - 7) + " communication"},
                        {"x", names},
                        {"y", v},
                        {"marker", {{"color", colour(i + 4)}}}});
    }
    if (!comm.empty())
        page.chart("communication", comm,
                   {{"title", {{"text", "Communication streams' busy time (hidden or not)"}}},
                    {"barmode", "group"},
                    {"yaxis", {{"title", {{"text", "busy seconds per stream"}}}}},
                    {"xaxis", {{"type", "category"}}}},
                   300);
}

void add_memory(Page& page, const nlohmann::json& result) {
    const nlohmann::json& stages = result.at("stages");
    const auto names = stage_names(stages);
    const double gib = 1024.0 * 1024 * 1024, capacity = result.value("memory_capacity_bytes", 0.0) / gib;
    std::vector<std::string> parts;
    for (const auto& st : stages) {
        const nlohmann::json memory = st.value("memory_bytes", nlohmann::json::object());
        for (const auto& [k, v] : memory.items())
            if (k != "total" && std::find(parts.begin(), parts.end(), k) == parts.end()) parts.push_back(k);
    }
    nlohmann::json data = nlohmann::json::array();
    for (size_t i = 0; i < parts.size(); ++i) {
        std::vector<double> v;
        for (const auto& st : stages) v.push_back(st.at("memory_bytes").value(parts[i], 0.0) / gib);
        data.push_back(
            {{"type", "bar"}, {"name", parts[i]}, {"x", names}, {"y", v}, {"marker", {{"color", colour(i)}}}});
    }
    const bool oom = result.value("out_of_memory", false);
    page.section("Memory per stage", "peak per GPU by what holds it, against the device's " + num(capacity, 4) +
                                         " GiB: " + (oom ? "OUT OF MEMORY" : "fits"));
    nlohmann::json layout = {{"title", {{"text", "Peak memory per GPU by stage"}}},
                             {"barmode", "stack"},
                             {"yaxis", {{"title", {{"text", "GiB per GPU"}}}, {"rangemode", "tozero"}}},
                             {"xaxis", {{"type", "category"}}},
                             {"shapes",
                              {{{"type", "line"},
                                {"xref", "paper"},
                                {"x0", 0},
                                {"x1", 1},
                                {"y0", capacity},
                                {"y1", capacity},
                                {"line", {{"color", "#C0392B"}, {"dash", "dash"}, {"width", 2}}}}}},
                             {"annotations",
                              {{{"xref", "paper"},
                                {"x", 1},
                                {"xanchor", "right"},
                                {"y", capacity},
                                {"yanchor", "bottom"},
                                {"text", "capacity " + num(capacity, 4) + " GiB"},
                                {"showarrow", false}}}}};
    page.chart("memory", data, layout);
}

}  // namespace

void add_training(Page& page, const nlohmann::json& result, const std::string& trace) {
    page.section("Step", "predicted figures and, where fathom's validation bands cover the plan, their 90% intervals");
    const double gib = 1024.0 * 1024 * 1024;
    page.table("headline", {"figure", "predicted", "unit", "90% interval"},
               {headline_row(result, "step_time_s", "step time", "s"),
                headline_row(result, "tokens_per_s_per_gpu", "throughput", "tokens/s per GPU"),
                headline_row(result, "mfu", "MFU", "%", 100),
                headline_row(result, "bubble_fraction", "pipeline bubble", "% of the step", 100),
                headline_row(result, "exposed_comm_s", "exposed communication", "s (mean over stages)"),
                headline_row(result, "peak_memory_bytes", "peak memory", "GiB per GPU", 1 / gib)});
    if (!trace.empty())
        add_timeline(page, trace, result.value("step_time_s", 0.0),
                     {"Pipeline timeline", "every task of the step by stage and stream", "Tasks per stage and stream",
                      "time in the step (ms)"},
                     task_kind);
    add_breakdown(page, result.at("stages"));
    add_memory(page, result);
}

}  // namespace fathom::report
