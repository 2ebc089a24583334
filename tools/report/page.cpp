#include "tools/report/page.h"

#include <stdexcept>

extern "C" const char fathom_plotly_js_begin[];
extern "C" const char fathom_plotly_js_end[];

namespace fathom::report {

namespace {

constexpr const char* kStyle = R"(<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px 40px;
       color: #1d2330; background: #fff; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 8px 0; }
h2 { font-size: 17px; margin: 28px 0 4px 0; border-bottom: 1px solid #d8dce4; padding-bottom: 3px; }
p.note { color: #5a6275; font-size: 13px; margin: 2px 0 8px 0; }
table.facts td { padding: 1px 14px 1px 0; font-size: 14px; vertical-align: top; }
table.facts td:first-child { color: #5a6275; }
table.fathom-table { border-collapse: collapse; font-size: 13px; margin: 6px 0 10px 0; }
table.fathom-table th, table.fathom-table td { border-bottom: 1px solid #e3e6ec; padding: 3px 10px; text-align: right; }
table.fathom-table th { background: #f3f5f9; }
table.fathom-table td:first-child, table.fathom-table th:first-child, table.fathom-table td.t { text-align: left; }
div.fathom-chart { width: 100%; }
footer { color: #8a91a3; font-size: 12px; margin-top: 30px; }
</style>
)";

// JSON inside a <script>: "</" cannot end the element early.
std::string script_json(const nlohmann::json& j) {
    std::string s = j.dump(-1, ' ', true);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        out += s[i];
        if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') out += '\\';
    }
    return out;
}

}  // namespace

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string_view plotly_js() {
    return {fathom_plotly_js_begin, static_cast<size_t>(fathom_plotly_js_end - fathom_plotly_js_begin)};
}

void Page::fact(const std::string& name, const std::string& value) { facts_.emplace_back(name, value); }

void Page::section(const std::string& heading, const std::string& note) {
    body_ += "<h2>" + escape(heading) + "</h2>\n";
    if (!note.empty()) body_ += "<p class=\"note\">" + escape(note) + "</p>\n";
}

void Page::text(const std::string& paragraph) { body_ += "<p class=\"note\">" + escape(paragraph) + "</p>\n"; }

void Page::chart(const std::string& id, nlohmann::json data, nlohmann::json layout, int height_px) {
    layout["height"] = height_px;
    if (!layout.contains("margin")) layout["margin"] = {{"l", 70}, {"r", 30}, {"t", 70}, {"b", 55}};
    layout["font"] = {{"family", "system-ui, Helvetica, Arial, sans-serif"}, {"size", 12}};
    if (!layout.contains("legend"))
        layout["legend"] = {{"orientation", "h"}, {"x", 0}, {"y", 1.0}, {"yanchor", "bottom"}};
    if (layout.contains("title") && layout["title"].is_object()) {
        layout["title"]["x"] = 0;
        layout["title"]["xanchor"] = "left";
        layout["title"]["y"] = 0.99;
        layout["title"]["yanchor"] = "top";
        layout["title"]["font"] = {{"size", 14}};
    }
    const std::string title =
        layout.contains("title") && layout["title"].is_object() ? layout["title"].value("text", "") : std::string();
    body_ +=
        "<div class=\"fathom-chart\" id=\"chart-" + escape(id) + "\" data-title=\"" + escape(title) + "\"></div>\n";
    figs_.push_back({{"id", "chart-" + id}, {"data", std::move(data)}, {"layout", std::move(layout)}});
    ++charts_;
}

void Page::table(const std::string& id, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
    body_ += "<table class=\"fathom-table\" id=\"table-" + escape(id) + "\">\n<tr>";
    for (const auto& h : header) body_ += "<th>" + escape(h) + "</th>";
    body_ += "</tr>\n";
    for (const auto& r : rows) {
        body_ += "<tr>";
        for (const auto& c : r) {
            // Numbers right-aligned, text left.
            const bool number = !c.empty() && c.find_first_not_of("0123456789.eE+-% ") == std::string::npos;
            body_ += (number ? "<td>" : "<td class=\"t\">") + escape(c) + "</td>";
        }
        body_ += "</tr>\n";
    }
    body_ += "</table>\n";
}

std::string Page::html() const {
    const std::string_view js = plotly_js();
    if (js.find("</script") != std::string_view::npos)
        throw std::logic_error("the embedded plotly.js holds \"</script\" and cannot be inlined");
    std::string h;
    h.reserve(js.size() + body_.size() + 4096);
    h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(title_) +
         "</title>\n";
    h += kStyle;
    h += "<script>\n";
    h.append(js);
    h += "\n</script>\n</head>\n<body>\n<h1>" + escape(title_) + "</h1>\n";
    if (!facts_.empty()) {
        h += "<table class=\"facts\">\n";
        for (const auto& [k, v] : facts_) h += "<tr><td>" + escape(k) + "</td><td>" + escape(v) + "</td></tr>\n";
        h += "</table>\n";
    }
    h += body_;
    h += "<footer>fathom report; charts by plotly.js (MIT licence), embedded.</footer>\n<script>\n";
    h += "const fathomFigures = " + script_json(figs_) + ";\n";
    h += R"(Promise.all(fathomFigures.map(f => Plotly.newPlot(document.getElementById(f.id), f.data, f.layout,
  {displayModeBar: false, responsive: true})))
  .then(() => { document.body.dataset.fathomDrawn = String(fathomFigures.length); })
  .catch(e => { document.body.dataset.fathomError = String(e); });
</script>
</body>
</html>
)";
    return h;
}

}  // namespace fathom::report
