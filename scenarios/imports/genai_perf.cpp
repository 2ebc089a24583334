// NVIDIA's serving benchmark clients' aggregate exports: GenAI-Perf's `genai-perf profile`
// profile_export_genai_perf.json (triton-inference-server/perf_analyzer, genai-perf/genai_perf/:
// export_data/json_exporter.py writes Statistics.stats_dict, metrics/statistics.py: a metric a key,
// {unit, avg, p1 ... p99, min, max, std}, time metrics in ms, and the command's arguments as
// `input_config`; genai-perf 0.0.x of 2024-2025) and AIPerf's `aiperf profile`
// profile_export_aiperf.json (ai-dynamo/aiperf: aiperf/exporters/json_exporter.py, the same metric
// objects at the top level from 0.2 (docs/tutorials/working-with-profile-exports.md) or under
// `records` in its first JsonExportData; `input_config` the UserConfig: endpoint, loadgen, input).
// Both define inter_token_latency per request as (request_latency - time_to_first_token) /
// (output_sequence_length - 1) (genai-perf profile_data_parser/llm_profile_data_parser.py, aiperf
// metrics/types/inter_token_latency_metric.py): fathom's tpot_ms, not its itl_ms (the gaps between
// chunks, which neither export aggregates). The workload (concurrency or request rate, requests,
// mean lengths) and the statistics from the file; the server's layout from the scenario.
#include "scenarios/imports/importers.h"
#include "scenarios/imports/json_input.h"
#include "scenarios/launch/launch.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

namespace fathom::scenarios::imports {
namespace {

using nlohmann::json;

struct Tool {
    const char* name;
    bool aiperf;
};
constexpr Tool kGenaiPerf{"genai-perf", false};
constexpr Tool kAiperf{"aiperf", true};

// The value at `path` under `j`, or nullptr where a key is missing or null.
const json* at(const json& j, std::initializer_list<const char*> path) {
    const json* v = &j;
    for (const char* k : path) {
        if (!v->is_object() || !v->contains(k) || (*v)[k].is_null()) return nullptr;
        v = &(*v)[k];
    }
    return v;
}

// The first number of `paths` under `config`; NAN when none holds one.
double first_number(const json& config, std::initializer_list<std::initializer_list<const char*>> paths) {
    for (const auto& p : paths)
        if (const json* v = at(config, p); v && v->is_number()) return v->get<double>();
    return NAN;
}

// A statistic of metric `name` (avg, p50, ...) in `unit`; NAN when the file has none.
double stat(const Source& file, const json& metrics, const std::string& name, const std::string& s,
            const std::string& unit) {
    const json* m = at(metrics, {name.c_str()});
    if (!m || !m->is_object() || !m->contains(s) || !(*m)[s].is_number()) return NAN;
    const std::string u = m->value("unit", std::string());
    double scale = 1;
    if (unit == "ms") {
        const double to_ms = u == "ms" ? 1 : u == "s" || u == "sec" ? 1e3 : u == "us" ? 1e-3 : u == "ns" ? 1e-6 : 0;
        if (to_ms == 0) fail(file, name + ".unit", "a time in '" + u + "', none of ms, s, us, ns");
        scale = to_ms;
    } else if (u != unit) {
        fail(file, name + ".unit", "'" + u + "', expected '" + unit + "'");
    }
    return (*m)[s].get<double>() * scale;
}

double required(const Source& file, const json& metrics, const std::string& name, const std::string& unit) {
    const double v = stat(file, metrics, name, "avg", unit);
    if (std::isnan(v)) fail(file, name + ".avg", "missing (every export of this tool has it)");
    return v;
}

void arrival(YAML::Node w, YAML::Node c, const Source& file, const json& config, const Tool& t) {
    const double rate = first_number(
        config, {{"request_rate"}, {"perf_analyzer", "stimulus", "request_rate"}, {"loadgen", "request_rate"}});
    const double concurrency = first_number(
        config, {{"concurrency"}, {"perf_analyzer", "stimulus", "concurrency"}, {"loadgen", "concurrency"}});
    if (std::isnan(rate)) {
        if (std::isnan(concurrency) || concurrency < 1)
            fail(file, "input_config", "states neither a concurrency nor a request_rate (the run's arrivals)");
        w["arrival"] = "concurrency";
        w["concurrency"] = static_cast<int64_t>(concurrency);
        return;
    }
    if (!(rate > 0)) fail(file, "input_config", "a request_rate of " + launch::number_text(rate));
    const json* mode = at(config, {"loadgen", "request_rate_mode"});
    if (t.aiperf) {  // aiperf/common/config/config_defaults.py: RequestRateMode.POISSON unless set
        w["arrival"] = mode && *mode == "constant" ? "constant" : "poisson";
        if (!mode) c["assumed"].push_back("serving.workload.arrival");
    } else {  // genai-perf passes no --request-distribution: perf_analyzer's default, constant
        w["arrival"] = "constant";
        c["notes"].push_back("request rate: perf_analyzer's default request distribution (constant)");
        c["assumed"].push_back("serving.workload.arrival");
    }
    w["request_rate"] = launch::yaml_number(rate);
    if (!std::isnan(concurrency) && t.aiperf) {
        c["notes"].push_back("the client also held at most " + launch::number_text(concurrency) +
                             " requests in flight; recorded at the rate");
        c["assumed"].push_back("serving.workload.arrival");
    }
}

void workload(YAML::Node w, YAML::Node c, const Source& file, const json& j, const json& metrics, const Tool& t) {
    const json* config = at(j, {"input_config"});
    if (!config || !config->is_object()) fail(file, "input_config", "missing: the export holds the run's arguments");
    arrival(w, c, file, *config, t);
    double requests = stat(file, metrics, "request_count", "avg", t.aiperf ? "requests" : "count");
    if (std::isnan(requests)) requests = first_number(*config, {{"request_count"}, {"loadgen", "request_count"}});
    if (std::isnan(requests) || requests < 1)
        fail(file, "request_count", "the export states no request count (a run measured over a time window)");
    w["num_requests"] = static_cast<int64_t>(requests);
    // The run's mean lengths as fixed ones: exact for a synthetic dataset of stddev 0.
    w["dataset"] = "synthetic";
    w["input_len"] = static_cast<int64_t>(std::llround(required(file, metrics, "input_sequence_length", "tokens")));
    w["output_len"] = static_cast<int64_t>(std::llround(required(file, metrics, "output_sequence_length", "tokens")));
    c["assumed"].push_back("serving.workload.input_len");
    c["assumed"].push_back("serving.workload.output_len");
    c["notes"].push_back("input_len and output_len: the run's mean input_sequence_length and output_sequence_length");
}

void metrics(YAML::Node c, const Source& file, const json& m) {
    c["metric"] = "output_tokens_per_s";
    c["value"] = launch::yaml_number(required(file, m, "output_token_throughput", "tokens/sec"));
    c["unit"] = "tokens/s";
    c["statistic"] = "single";
    c["scope"] = "system";
    YAML::Node others = c["other_metrics"];
    others.push_back(metric("requests_per_s", required(file, m, "request_throughput", "requests/sec"), "requests/s",
                            "single", "system"));
    struct Latency {
        const char* key;
        const char* name;
        const char* unit;
        double scale;  // from ms
    };
    const Latency latencies[] = {{"time_to_first_token", "ttft_ms", "ms", 1},
                                 {"inter_token_latency", "tpot_ms", "ms", 1},
                                 {"request_latency", "e2e_latency_s", "s", 1e-3}};
    const std::pair<const char*, const char*> stats[] = {
        {"avg", "mean"}, {"p50", "median"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}};
    for (const Latency& l : latencies)
        for (const auto& [key, statistic] : stats)
            if (const double v = stat(file, m, l.key, key, "ms"); !std::isnan(v))
                others.push_back(metric(l.name, v * l.scale, l.unit, statistic));
}

YAML::Node case_of(const Source& file, const Context& context, const json& j, const Tool& t) {
    const json* records = at(j, {"records"});
    const json& m = records && records->is_object() ? *records : j;
    YAML::Node c = new_case(file, context, "serving", t.name);
    add_scenario(c, file, context, "the server's model, GPUs and layout");
    c["serving"]["benchmark_tool"] = t.name;
    workload(c["serving"]["workload"], c, file, j, m, t);
    metrics(c, file, m);
    c["notes"].push_back(std::string("tpot_ms: ") + t.name +
                         "'s inter_token_latency, per request (request_latency - ttft) / (output tokens - 1)");
    const json* model = at(j, {"input_config", t.aiperf ? "endpoint" : "model"});
    if (model && t.aiperf) model = at(*model, {"model_names"});
    if (model && model->is_array() && !model->empty() && (*model)[0].is_string())
        c["notes"].push_back("the benchmark's model: " + (*model)[0].get<std::string>());
    c["completeness"] = "mostly_complete";
    return c;
}

std::vector<YAML::Node> read(const Source& file, const Context& context, const Tool& t) {
    const json j = parse_json(file, file.text, 1);
    if (!j.is_object()) fail(file, "", "an export is a JSON object");
    try {
        return {case_of(file, context, j, t)};
    } catch (const json::exception& e) {  // a value of the wrong JSON type
        fail(file, "", std::string("a value of the wrong type: ") + e.what());
    }
}

// An aggregate export: a JSON object of metric objects with units (its input_config comes last,
// so that a truncated export is still recognized, and refused at its line).
bool looks_like(const Source& f) {
    const size_t brace = f.text.find_first_not_of(" \t\r\n");
    return brace != std::string::npos && f.text[brace] == '{' &&
           f.text.find("\"time_to_first_token\"") != std::string::npos && f.text.find("\"unit\"") != std::string::npos;
}

// AIPerf's marks: its first layout's records, its summary metrics and status, its loadgen config.
bool aiperf_config(const Source& f) {
    for (const char* mark :
         {"\"records\"", "\"benchmark_duration\"", "\"was_cancelled\"", "\"loadgen\"", "aiperf profile"})
        if (f.text.find(mark) != std::string::npos) return true;
    return false;
}

}  // namespace

Importer genai_perf_importer() {
    return {"GenAI-Perf's export (profile_export_genai_perf.json)",
            [](const Source& f) { return looks_like(f) && !aiperf_config(f); },
            [](const Source& f, const Context& c) { return read(f, c, kGenaiPerf); }};
}

Importer aiperf_importer() {
    return {"AIPerf's export (profile_export_aiperf.json)",
            [](const Source& f) { return looks_like(f) && aiperf_config(f); },
            [](const Source& f, const Context& c) { return read(f, c, kAiperf); }};
}

}  // namespace fathom::scenarios::imports
