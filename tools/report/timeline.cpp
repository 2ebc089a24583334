// A Perfetto trace (the one `--trace` writes) as a timeline chart: a row per process and thread,
// a horizontal bar per task, one Plotly trace per kind of task.
#include "tools/report/charts.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fathom::report {

namespace {

struct Bar {
    double start_us = 0, end_us = 0;
    int tasks = 0;
};

// Tasks closer than `gap_us` merged, in start order.
std::vector<Bar> merged(std::vector<Bar> list, double gap_us) {
    std::sort(list.begin(), list.end(), [](const Bar& a, const Bar& b) { return a.start_us < b.start_us; });
    std::vector<Bar> out;
    for (const Bar& b : list) {
        if (!out.empty() && b.start_us - out.back().end_us <= gap_us) {
            out.back().end_us = std::max(out.back().end_us, b.end_us);
            out.back().tasks += b.tasks;
        } else {
            out.push_back(b);
        }
    }
    return out;
}

}  // namespace

void add_timeline(Page& page, const std::string& trace, double span_s, const TimelineLabels& labels,
                  const std::function<std::string(const std::string&)>& kind_of) {
    const nlohmann::json doc = nlohmann::json::parse(trace);
    std::map<int, std::string> process;                                           // pid -> "stage k"
    std::map<std::pair<int, int>, std::string> stream;                            // (pid, tid) -> "compute"
    std::map<std::string, std::map<std::pair<int, int>, std::vector<Bar>>> bars;  // kind -> row -> bars
    std::vector<std::string> kinds;
    size_t tasks = 0;
    double end_us = 0;
    for (const auto& e : doc.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (ph == "M" && e.at("name") == "process_name") process[e.at("pid")] = e.at("args").at("name");
        if (ph == "M" && e.at("name") == "thread_name") stream[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
        if (ph != "X") continue;
        const std::string kind = kind_of(e.at("name"));
        if (!bars.count(kind)) kinds.push_back(kind);
        const double ts = e.at("ts"), dur = e.at("dur");
        bars[kind][{e.at("pid"), e.at("tid")}].push_back({ts, ts + dur, 1});
        end_us = std::max(end_us, ts + dur);
        ++tasks;
    }
    auto row_name = [&](const std::pair<int, int>& r) { return process[r.first] + " · " + stream[r]; };
    std::vector<std::string> rows;
    for (const auto& [r, name] : stream) rows.push_back(row_name(r));
    // A pixel of a 1,500-pixel-wide span: tasks of one kind on one row closer are one bar.
    const double gap_us = (span_s > 0 ? span_s * 1e6 : end_us) / 1500;
    nlohmann::json data = nlohmann::json::array();
    size_t drawn = 0;
    for (size_t k = 0; k < kinds.size(); ++k) {
        nlohmann::json y = nlohmann::json::array(), x = nlohmann::json::array(), base = nlohmann::json::array(),
                       text = nlohmann::json::array();
        for (auto& [r, list] : bars[kinds[k]]) {
            const auto runs = merged(list, gap_us);
            for (const Bar& b : runs) {
                y.push_back(row_name(r));
                base.push_back(b.start_us / labels.axis_us);
                x.push_back((b.end_us - b.start_us) / labels.axis_us);
                text.push_back(std::to_string(b.tasks) + (b.tasks == 1 ? " task" : " tasks"));
            }
            drawn += runs.size();
        }
        data.push_back({{"type", "bar"},
                        {"orientation", "h"},
                        {"name", kinds[k]},
                        {"y", y},
                        {"x", x},
                        {"base", base},
                        {"hovertext", text},
                        {"hovertemplate", kinds[k] + ": %{base:.4g} " + labels.unit + " + %{x:.4g} " + labels.unit +
                                              ", %{hovertext}<extra></extra>"},
                        {"marker", {{"color", colour(k)}}}});
    }
    page.section(labels.heading, labels.note + " (" + std::to_string(tasks) + " tasks as " + std::to_string(drawn) +
                                     " bars: tasks of one kind less than a pixel apart are drawn as one)");
    nlohmann::json layout = {{"title", {{"text", labels.title}}},
                             {"barmode", "overlay"},
                             {"bargap", 0.25},
                             {"xaxis", {{"title", {{"text", labels.axis}}}}},
                             {"yaxis",
                              {{"type", "category"},
                               {"categoryorder", "array"},
                               {"categoryarray", rows},
                               {"autorange", "reversed"},
                               {"automargin", true}}},
                             {"margin", {{"l", 150}, {"r", 30}, {"t", 70}, {"b", 55}}}};
    page.chart("timeline", data, layout, std::max(320, 110 + 24 * static_cast<int>(rows.size())));
}

}  // namespace fathom::report
