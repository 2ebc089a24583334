// The CLI's shared helpers (tools/cli/cli.h).
#include "scenarios/output_file.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "sim/stats.h"
#include "tools/cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

namespace fathom::cli {

std::string one_file(const Args& a) {
    if (a.positional.size() != 1) throw sim::InputError("'" + a.command + "' needs exactly one file argument");
    return a.positional.front();
}

// Writes a whole output file at once, after the work succeeded (never a partial file).
void write_file(const std::string& path, const std::string& text) { scenarios::write_output_file(path, text); }

void write_json(const std::string& path, const nlohmann::json& j) { write_file(path, j.dump(2) + "\n"); }

std::string gib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
    return buf;
}

double percentile_of(std::vector<double> v, double q) { return sim::quantile(std::move(v), q); }

double median_of(std::vector<double> v) { return percentile_of(std::move(v), 0.5); }

nlohmann::json field_json(const plans::FieldValue& v) {
    return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

// A flat record as a JSON object; dotted field names become nested objects.
nlohmann::json record_json(const plans::Record& r) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, value] : r.fields) {
        nlohmann::json* at = &j;
        size_t start = 0;
        for (size_t dot; (dot = name.find('.', start)) != std::string::npos; start = dot + 1)
            at = &(*at)[name.substr(start, dot - start)];
        (*at)[name.substr(start)] = field_json(value);
    }
    return j;
}

nlohmann::json report_json(const plans::Report& rep) {
    nlohmann::json j = record_json(rep.summary);
    for (const auto& [name, rows] : rep.tables) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& row : rows) arr.push_back(record_json(row));
        j[name] = arr;
    }
    return j;
}

plans::EvaluationContext cli_context(std::shared_ptr<const plans::Catalog> catalog, uint64_t seed, const Args& a) {
    plans::EvaluationContext c = scenarios::make_context(std::move(catalog), seed, a.algorithm);
    if (a.max_tasks > 0) c.max_tasks = a.max_tasks;
    if (a.max_requests > 0) c.max_requests = a.max_requests;
    return c;
}

std::string printable(const std::string& s) {
    std::string out;
    char buf[8];
    for (unsigned char c : s) {
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string records_csv(const std::vector<plans::Record>& rows, const std::vector<std::string>& columns) {
    std::string out;
    for (const auto& c : columns) out += std::string(out.empty() ? "" : ",") + c;
    out += "\n";
    char buf[64];
    for (const auto& r : rows) {
        std::string row;
        for (size_t i = 0; i < columns.size(); ++i) {
            if (i) row += ",";
            const plans::FieldValue* v = r.find(columns[i]);
            if (!v) continue;
            if (auto b = std::get_if<bool>(v)) row += *b ? "1" : "0";
            else if (auto n = std::get_if<int64_t>(v)) row += std::to_string(*n);
            else if (auto d = std::get_if<double>(v)) {
                std::snprintf(buf, sizeof buf, "%.9g", *d);
                row += buf;
            } else if (auto t = std::get_if<std::string>(v)) {
                std::string text = *t;
                for (char& ch : text)
                    if (ch == '"' || ch == '\n') ch = '\'';
                row += "\"" + text + "\"";
            }
        }
        out += row + "\n";
    }
    return out;
}

void print_intervals(const plans::Scenario& s, const plans::Outcome& o, const plans::IntervalTable& bands) {
    const auto metrics = plans::headline_intervals(s, o, bands);
    if (metrics.empty()) return;
    std::printf("\n90%% interval   (split-conformal bands from fathom's errors on published measurements)\n");
    std::vector<std::string> notes;
    for (const plans::BandedMetric& m : metrics) {
        const plans::Interval& i = m.interval;
        if (i.finite())
            std::printf("  %-22s %12.4g .. %-12.4g (predicted %.4g)\n", m.key.c_str(), i.low, i.high, m.value);
        else std::printf("  %-22s unbounded (predicted %.4g)\n", m.key.c_str(), m.value);
        if (std::find(notes.begin(), notes.end(), i.note) == notes.end()) notes.push_back(i.note);
    }
    for (const auto& n : notes) std::printf("  %s\n", n.c_str());
}

nlohmann::json print_rank_gap(const plans::IntervalTable& bands, const std::string& regime, double first, double second,
                              const hardware::AcceleratorSpec& accelerator) {
    const auto g = plans::rank_gap(bands, regime, first, second, accelerator);
    if (!g) return nullptr;
    std::printf("\n%s\n", g->text.c_str());
    return {{"difference", g->difference}, {"band", g->band}, {"inside", g->inside}, {"text", g->text}};
}

void print_op_costs(const hardware::AcceleratorSpec& a, plans::CostModelKind kind, const workloads::OpSources& src) {
    if (kind == plans::CostModelKind::Roofline) {
        std::printf("op costs        roofline (no measured table for %s)\n", a.id.c_str());
        return;
    }
    if (kind == plans::CostModelKind::Mixed) {
        std::printf("op costs        measured tables on some pools' devices, the roofline on others\n");
    } else {
        // The table's path from the data directory (hardware/calibration/<id>/table.yaml).
        const std::string& path = a.calibration_table;
        const size_t at = path.rfind("hardware/calibration/");
        std::printf("op costs        measured table %s\n", (at == std::string::npos ? path : path.substr(at)).c_str());
    }
    for (int c = 0; c < workloads::OpSources::kClasses; ++c) {
        if (!src.seen[static_cast<size_t>(c)]) continue;
        std::string ops;
        for (const auto& x : src.outside[static_cast<size_t>(c)]) ops += (ops.empty() ? "" : ", ") + x;
        const std::string how = plans::op_class_pricing(kind, src.inside[static_cast<size_t>(c)], !ops.empty());
        std::printf("  %-13s %s%s%s\n", workloads::OpSources::class_name(c), how.c_str(),
                    ops.empty() ? "" : "; outside its measured range, on the roofline: ", ops.c_str());
    }
}

void print_device_model(const hardware::AcceleratorSpec& a) {
    if (a.device_model == "estimated")
        std::printf("device model    estimated device model: %s\n", a.device_model_source.c_str());
    else if (a.device_model == "published")
        std::printf("device model    published figures: %s\n", a.device_model_source.c_str());
}

}  // namespace fathom::cli
