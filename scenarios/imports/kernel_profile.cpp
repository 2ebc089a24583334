// Kernel profiles of transformer layers as rows of layers.csv (scenarios/layer_check.h), which
// `fathom calibrate layers` checks against fathom's per-op sums, in all and per op class:
//   - torch.profiler's key_averages().table() text (torch/autograd/profiler_util.py
//     _build_table: columns between dashed rules, "Self CUDA" ("Self Device" from torch 2.4) a
//     column, then "Self CUDA time total: 9.740ms"), as tools/calibrate/layers.py writes it: a
//     section a layer, under "== MODEL PHASE s=N" (train, forward), "t=N" (prefill) or
//     "b=B kv=K" (decode);
//   - torch.profiler's export_chrome_trace JSON: "X" events of cat kernel, gpu_memcpy, gpu_memset,
//     `dur` in microseconds;
//   - Nsight Systems' `nsys stats --report cuda_gpu_kern_sum --format csv`: "Total Time (ns)" and
//     "Name" a kernel (nsys 2023.4 and later; earlier releases named the report gpukernsum).
// Each kernel's name gives its class (kOpClasses): NCCL communication, copies and memsets,
// attention (flash, fmha, sdpa, cuDNN's fused-attention helpers) before GEMMs (cutlass, cuBLAS's
// nvjet and xmma, gemm), elementwise (PyTorch's native kernels, norms, reductions, copies, Triton),
// other. The profile is of one call of the layer (divided by the profiler steps torch recorded:
// ProfilerStep*); its identity is the section's label, or, without one, the training scenario's
// micro-batch at its sequence length (phase train). time_us is the kernels' sum without NCCL's
// (the layer check prices no communication); a table cut at its row_limit gives the rest of its
// device total to `other`.
#include "scenarios/calibration_io.h"
#include "scenarios/imports/importers.h"
#include "scenarios/imports/json_input.h"
#include "scenarios/layer_check.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace fathom::scenarios::imports {
namespace {

struct Layer {
    std::string label, model, phase;
    int line = 0;  // the label's
    int64_t batch = 0, q_len = 0, kv_len = 0;
    std::array<double, 6> us{};  // per class (kOpClasses)
    double total_us = 0;         // the profiler's device total, when it states one
    double steps = 1;            // profiler steps recorded
    bool fused = false;          // Triton kernels: torch.compile's fused elementwise ops
};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

size_t class_of(const std::string& kernel) {
    const std::string k = lower(kernel);
    auto any = [&](std::initializer_list<const char*> words) {
        return std::any_of(words.begin(), words.end(), [&](const char* w) { return k.find(w) != std::string::npos; });
    };
    if (any({"nccl"})) return 3;
    if (any({"memcpy", "memset"})) return 4;
    if (any({"flash", "fmha", "attention", "attn", "sdpa", "cudnn::fusion"})) return 1;
    if (any({"gemm", "cutlass", "cublas", "nvjet", "xmma", "matmul", "wgmma"})) return 0;
    if (any({"elementwise", "vectorized", "norm", "reduce", "cat", "copy", "softmax", "triton", "at::native"}))
        return 2;
    return 5;
}

void add_kernel(Layer& l, const std::string& name, double us) {
    l.us[class_of(name)] += us;
    l.fused = l.fused || name.rfind("triton_", 0) == 0;
}

// A duration as the table prints it: "1.620ms", "540.140us", "2.1s".
bool duration_us(const std::string& text, double& us) {
    char unit[8] = {};
    if (std::sscanf(text.c_str(), "%lf%7s", &us, unit) != 2) return false;
    const std::string u = unit;
    const double scale = u == "s" ? 1e6 : u == "ms" ? 1e3 : u == "us" ? 1 : u == "ns" ? 1e-3 : -1;
    us *= scale;
    return scale > 0;
}

// "== llama3-8b train s=4096": the layer's identity (tools/calibrate/layers.py's labels).
void identity(const Source& file, Layer& l, const std::string& label, int line) {
    std::istringstream in(label);
    in >> l.model >> l.phase;
    l.label = label;
    l.line = line;
    for (std::string w; in >> w;) {
        const size_t eq = w.find('=');
        const std::string k = w.substr(0, eq);
        const int64_t v = eq == std::string::npos ? 0 : std::atoll(w.c_str() + eq + 1);
        if (v <= 0) fail(file, "label", "'" + w + "' is not KEY=N (s, t, b, kv)", line);
        if (k == "s" || k == "t") l.batch = 1, l.q_len = l.kv_len = v;
        else if (k == "b") l.batch = v, l.q_len = 1;
        else if (k == "kv") l.kv_len = v;
        else fail(file, "label", "unknown '" + k + "' (s, t, b, kv)", line);
    }
    if (l.model.empty() || l.phase.empty() || l.batch == 0 || l.kv_len == 0)
        fail(file, "label", "'" + label + "' is not 'MODEL PHASE s=N', 't=N' or 'b=B kv=K'", line);
}

// The column spans of a dashed rule ("----  -----").
std::vector<std::pair<size_t, size_t>> spans(const std::string& rule) {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t at = rule.find('-'); at != std::string::npos;) {
        const size_t end = std::min(rule.find(' ', at), rule.size());
        out.emplace_back(at, end - at);
        at = rule.find('-', end);
    }
    return out;
}

bool is_rule(const std::string& line) {
    return line.size() >= 20 && line.find_first_not_of("- ") == std::string::npos && line.find("---") == 0;
}

std::string cell(const std::string& line, std::pair<size_t, size_t> span) {
    if (span.first >= line.size()) return "";
    std::string s = line.substr(span.first, span.second);
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
}

// One table's rows (after its header rule) into `l`: the "Self CUDA" (or "Self Device") column.
size_t table_rows(const Source& file, const std::vector<std::string>& lines, size_t i, Layer& l) {
    const auto cols = spans(lines[i]);
    size_t self = cols.size(), calls = cols.size();
    for (size_t c = 0; c < cols.size(); ++c) {
        const std::string h = cell(lines[i + 1], cols[c]);
        if (h == "Self CUDA" || h == "Self Device") self = c;
        if (h == "# of Calls") calls = c;
    }
    if (self == cols.size()) fail(file, "Self CUDA", "the table has no device time column (profile CUDA)", i + 2);
    for (i += 3; i < lines.size() && !is_rule(lines[i]); ++i) {
        const std::string name = cell(lines[i], cols[0]);
        double us = 0;
        if (!duration_us(cell(lines[i], cols[self]), us)) fail(file, "Self CUDA", "not a duration", i + 1);
        if (name.rfind("ProfilerStep", 0) == 0 && calls < cols.size())
            l.steps = std::max(1.0, std::atof(cell(lines[i], cols[calls]).c_str()));
        else if (us > 0) add_kernel(l, name, us);
    }
    return i;
}

std::vector<Layer> read_table(const Source& file) {
    std::vector<std::string> lines;
    std::istringstream in(file.text);
    for (std::string line; std::getline(in, line);) lines.push_back(line.substr(0, line.find_last_not_of("\r") + 1));
    std::vector<Layer> out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].rfind("== ", 0) == 0) {
            out.emplace_back();
            identity(file, out.back(), lines[i].substr(3), static_cast<int>(i) + 1);
        } else if (is_rule(lines[i]) && i + 2 < lines.size() && is_rule(lines[i + 2])) {
            if (out.empty() || out.back().total_us > 0 || out.back().us != std::array<double, 6>{}) out.emplace_back();
            i = table_rows(file, lines, i, out.back());
        } else if (const size_t t = lines[i].find(" time total: ");
                   t != std::string::npos && lines[i].rfind("Self CPU", 0) != 0 && !out.empty()) {
            if (!duration_us(lines[i].substr(t + 13), out.back().total_us))
                fail(file, "Self CUDA time total", "not a duration", static_cast<int>(i) + 1);
        }
    }
    if (out.empty() || out.back().us == std::array<double, 6>{})
        fail(file, "", "no table of kernel times (key_averages().table() of a profile with CUDA activity)");
    return out;
}

std::vector<Layer> read_chrome(const Source& file) {
    const nlohmann::json j = parse_json(file, file.text, 1);
    if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array())
        fail(file, "traceEvents", "missing: not a Chrome trace of torch.profiler");
    Layer l;
    std::vector<std::string> steps;
    for (const auto& e : j["traceEvents"]) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
        const std::string name = e["name"], cat = e.value("cat", std::string());
        if (name.rfind("ProfilerStep#", 0) == 0 && std::find(steps.begin(), steps.end(), name) == steps.end())
            steps.push_back(name);
        if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
        if (!e.contains("dur") || !e["dur"].is_number()) fail(file, "traceEvents.dur", "a " + cat + " without one");
        add_kernel(l, cat == "kernel" ? name : cat, e["dur"].get<double>());
    }
    if (l.us == std::array<double, 6>{}) fail(file, "traceEvents", "no kernel events (profile with CUDA activity)");
    l.steps = std::max<double>(1, static_cast<double>(steps.size()));
    return {l};
}

std::vector<Layer> read_nsys(const Source& file) {
    std::istringstream in(file.text);
    Layer l;
    std::string label;
    int number = 0, label_line = 0;
    size_t total = std::string::npos, name = std::string::npos;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("== ", 0) == 0) label = line.substr(3), label_line = number;
        const std::vector<std::string> f = split_csv(line);
        if (name == std::string::npos) {  // before the header: nsys's "Processing ..." lines
            for (size_t c = 0; c < f.size(); ++c) {
                if (f[c] == "Total Time (ns)") total = c;
                if (f[c] == "Name") name = c;
            }
            if (total == std::string::npos) name = std::string::npos;
            continue;
        }
        if (line.empty()) continue;
        double ns = -1;
        try {
            if (total < f.size()) ns = std::stod(f[total]);
        } catch (const std::exception&) {}
        if (!(ns >= 0) || name >= f.size()) fail(file, "Total Time (ns)", "not a number of nanoseconds", number);
        add_kernel(l, f[name], ns / 1e3);
    }
    if (name == std::string::npos) fail(file, "Total Time (ns)", "no header with 'Total Time (ns)' and 'Name'");
    if (l.us == std::array<double, 6>{}) fail(file, "", "no kernel rows: the report was cut before them");
    if (!label.empty()) identity(file, l, label, label_line);
    return {l};
}

// A layer without a label: the training scenario's micro-batch at its sequence length, one
// forward and backward (phase train).
void from_scenario(const Source& file, const Context& context, Layer& l) {
    if (!context.scenario || !context.scenario->training())
        fail(file, "",
             "the profile does not say which layer ran: a '== MODEL PHASE s=N' line above it "
             "(tools/calibrate/layers.py's label) or the training scenario it profiled (--scenario)");
    const auto& t = context.scenario->training()->training;
    l.model = context.scenario->model.id;
    l.phase = "train";
    l.batch = t.micro_batch;
    l.q_len = l.kv_len = t.seq_len;
}

std::string csv_number(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

std::string rows(const Source& file, const Context& context, std::vector<Layer> layers, const char* tool) {
    std::string out = "model,phase,batch,q_len,kv_len,time_us,note,elementwise";
    for (const char* k : kOpClasses) out += std::string(",") + k + "_us";
    out += "\n";
    for (Layer& l : layers) {
        if (l.model.empty()) from_scenario(file, context, l);
        if (context.catalog && !context.catalog->models().count(l.model))
            fail(file, "label", "unknown model '" + l.model + "' (see `fathom list models`)", l.line);
        double listed = 0;
        for (double us : l.us) listed += us;
        // A table cut at row_limit leaves kernels out: the device total's remainder is "other".
        if (l.total_us > listed) l.us[5] += l.total_us - listed;
        // The layer program prices no communication (TP 1): NCCL kernels stay out of time_us.
        const double total = (std::max(l.total_us, listed) - l.us[3]) / l.steps;
        std::string note = std::string("kernel time per call, ") + tool + " " + file.path +
                           (l.label.empty() ? "" : " (" + l.label + ")");
        if (l.steps > 1) note += "; over " + csv_number(l.steps).substr(0, csv_number(l.steps).find('.')) + " steps";
        if (l.us[3] > 0) note += "; NCCL kernels outside time_us";
        out += l.model + "," + l.phase + "," + std::to_string(l.batch) + "," + std::to_string(l.q_len) + "," +
               std::to_string(l.kv_len) + "," + csv_number(total) + ",\"" + note + "\"," +
               (l.fused ? "fused" : "eager");
        for (double us : l.us) out += "," + csv_number(us / l.steps);
        out += "\n";
    }
    return out;
}

bool json_object(const Source& f) {
    const size_t brace = f.text.find_first_not_of(" \t\r\n");
    return brace != std::string::npos && f.text[brace] == '{';
}

}  // namespace

Importer torch_profiler_importer() {
    Importer i{"a torch.profiler kernel table or Chrome trace",
               [](const Source& f) {
                   return json_object(f) ? f.text.find("\"traceEvents\"") != std::string::npos &&
                                               f.text.find("\"kernel\"") != std::string::npos
                                         : f.text.find("Self CUDA") != std::string::npos ||
                                               f.text.find("Self Device") != std::string::npos;
               },
               nullptr};
    i.layer_rows = [](const Source& f, const Context& c) {
        return rows(f, c, json_object(f) ? read_chrome(f) : read_table(f), "torch.profiler");
    };
    return i;
}

Importer nsys_kernels_importer() {
    Importer i{"an nsys stats cuda_gpu_kern_sum CSV",
               [](const Source& f) {
                   return f.text.find("Total Time (ns)") != std::string::npos &&
                          f.text.find("Instances") != std::string::npos;
               },
               nullptr};
    i.layer_rows = [](const Source& f, const Context& c) { return rows(f, c, read_nsys(f), "nsys"); };
    return i;
}

}  // namespace fathom::scenarios::imports
