#pragma once
// One self-contained HTML page of charts and tables (`fathom run|capacity|search|compare --html`):
// plotly.js (Debian's python3-plotly, embedded in the program at build time: tools/report/
// plotly_js.S) inline in the page, so that it opens offline, with no server. Each chart is a
// <div class="fathom-chart"> drawn by Plotly.newPlot from the figure (data, layout) given here, SVG
// traces only; each table a <table class="fathom-table">. When every chart has drawn, the page sets
// document.body.dataset.fathomDrawn to their number (what the browser test waits for).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fathom::report {

class Page {
public:
    explicit Page(std::string title) : title_(std::move(title)) {}

    // A line of facts under the title (scenario, model, cluster, plan).
    void fact(const std::string& name, const std::string& value);
    void section(const std::string& heading, const std::string& note = "");
    void text(const std::string& paragraph);
    // A Plotly figure: `data` an array of traces, `layout` a layout object (title, axes); the page
    // adds its margins and font. `id` names the chart (chart-<id>).
    void chart(const std::string& id, nlohmann::json data, nlohmann::json layout, int height_px = 380);
    void table(const std::string& id, const std::vector<std::string>& header,
               const std::vector<std::vector<std::string>>& rows);

    int charts() const { return charts_; }
    // The whole page, plotly.js included.
    std::string html() const;

private:
    std::string title_;
    std::vector<std::pair<std::string, std::string>> facts_;
    std::string body_;                               // sections, text, tables and chart divs, in order
    nlohmann::json figs_ = nlohmann::json::array();  // {id, data, layout}
    int charts_ = 0;
};

// Text as HTML (&, <, >, " escaped).
std::string escape(const std::string& s);
// plotly.js as embedded at build time (its MIT licence header included).
std::string_view plotly_js();

}  // namespace fathom::report
