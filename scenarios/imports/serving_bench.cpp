// Serving benchmarks' result files: vLLM's `vllm bench serve --save-result` JSON (the same keys as
// benchmarks/benchmark_serving.py: vllm/benchmarks/serve.py of 0.9-0.11) and SGLang's
// `python -m sglang.bench_serving --output-file` JSONL (a JSON object a line, one run each:
// python/sglang/bench_serving.py of 0.4-0.5). The workload (arrival, rate or concurrency, requests,
// lengths) and the latency statistics come from the file; the server's layout from the scenario.
#include "scenarios/imports/importers.h"
#include "scenarios/imports/json_input.h"
#include "scenarios/launch/launch.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fathom::scenarios::imports {
namespace {

using nlohmann::json;

// How each tool names what the case needs.
struct Keys {
    const char* tool;
    const char* e2e;  // the end-to-end latency's stem ("e2el" or "e2e_latency")
    const char* input_throughput;
    const char* total_throughput;
};
constexpr Keys kVllm{"vllm-bench", "e2el", nullptr, "total_token_throughput"};
constexpr Keys kSglang{"sglang-bench", "e2e_latency", "input_throughput", nullptr};

double number(const Source& file, const json& j, const std::string& key) {
    if (!j.contains(key)) fail(file, key, "missing (a result of this tool has it)");
    const json& v = j[key];
    if (v.is_number()) return v.get<double>();
    if (v.is_string() && (v == "inf" || v == "Infinity")) return INFINITY;
    fail(file, key, "expected a number, got " + v.dump());
}

bool has_number(const json& j, const std::string& key) { return j.contains(key) && j[key].is_number(); }

void workload(YAML::Node w, YAML::Node c, const Source& file, const json& j) {
    if (j.contains("request_rate") && j["request_rate"] == "trace")
        fail(file, "request_rate", "a trace replay: the result does not hold the trace's arrival times");
    const double rate = j.contains("request_rate") ? number(file, j, "request_rate") : INFINITY;
    const bool capped = j.contains("max_concurrency") && j["max_concurrency"].is_number();
    const double completed = number(file, j, "completed");
    if (!(completed > 0)) fail(file, "completed", "no request completed");
    if (std::isinf(rate)) {
        if (capped) {
            w["arrival"] = "concurrency";
            w["concurrency"] = j["max_concurrency"].get<int64_t>();
        } else {
            w["arrival"] = "offline";
        }
    } else {
        w["arrival"] = "poisson";
        w["request_rate"] = launch::yaml_number(rate);
        if (j.contains("burstiness") && j["burstiness"].is_number() && j["burstiness"].get<double>() != 1.0)
            c["notes"].push_back("arrivals drawn with burstiness " + j["burstiness"].dump() +
                                 " (gamma); recorded as Poisson");
        if (capped)
            c["notes"].push_back("the client also held at most " + j["max_concurrency"].dump() +
                                 " requests in flight; recorded as Poisson at the rate");
        if (capped || (j.contains("burstiness") && j["burstiness"] != 1.0))
            c["assumed"].push_back("serving.workload.arrival");
    }
    w["num_requests"] = static_cast<int64_t>(completed);
    const std::string dataset = j.value("dataset_name", std::string());
    if (dataset == "sharegpt") {
        w["dataset"] = "sharegpt";
    } else {
        // The run's mean lengths as fixed ones: exact for a fixed-length random dataset.
        w["dataset"] = "synthetic";
        w["input_len"] = static_cast<int64_t>(std::llround(number(file, j, "total_input_tokens") / completed));
        w["output_len"] = static_cast<int64_t>(std::llround(number(file, j, "total_output_tokens") / completed));
        c["assumed"].push_back("serving.workload.input_len");
        c["assumed"].push_back("serving.workload.output_len");
        c["notes"].push_back("input_len and output_len: the run's mean tokens a request (total / completed)");
    }
}

void metrics(YAML::Node c, const Source& file, const json& j, const Keys& k) {
    c["metric"] = "output_tokens_per_s";
    c["value"] = launch::yaml_number(number(file, j, "output_throughput"));
    c["unit"] = "tokens/s";
    c["statistic"] = "single";
    c["scope"] = "system";
    YAML::Node others = c["other_metrics"];
    others.push_back(metric("requests_per_s", number(file, j, "request_throughput"), "requests/s", "single", "system"));
    if (k.total_throughput && has_number(j, k.total_throughput))
        others.push_back(
            metric("total_tokens_per_s", j[k.total_throughput].get<double>(), "tokens/s", "single", "system"));
    if (k.input_throughput && has_number(j, k.input_throughput))
        others.push_back(
            metric("input_tokens_per_s", j[k.input_throughput].get<double>(), "tokens/s", "single", "system"));
    struct Latency {
        std::string stem, name, unit;
        double scale;
    };
    const Latency latencies[] = {{"ttft", "ttft_ms", "ms", 1},
                                 {"tpot", "tpot_ms", "ms", 1},
                                 {"itl", "itl_ms", "ms", 1},
                                 {k.e2e, "e2e_latency_s", "s", 1e-3}};
    for (const Latency& l : latencies)
        for (const char* stat : {"mean", "median", "p90", "p95", "p99"}) {
            const std::string key = std::string(stat) + "_" + l.stem + "_ms";
            if (has_number(j, key)) others.push_back(metric(l.name, j[key].get<double>() * l.scale, l.unit, stat));
        }
}

// The case of result `j`; `run` > 0: the run-th of several in the file (its id suffixed).
YAML::Node case_of(const Source& file, const Context& context, const json& j, const Keys& k, int run);

YAML::Node one_case(const Source& file, const Context& context, const json& j, const Keys& k, int run) {
    if (!j.is_object()) fail(file, "", "a result is a JSON object");
    try {
        return case_of(file, context, j, k, run);
    } catch (const json::exception& e) {  // a value of the wrong JSON type
        fail(file, "", std::string("a value of the wrong type: ") + e.what());
    }
}

YAML::Node case_of(const Source& file, const Context& context, const json& j, const Keys& k, int run) {
    Context named = context;
    if (run > 0)
        named.id = (named.id.empty() ? std::filesystem::path(file.path).stem().string() : named.id) + "-" +
                   std::to_string(run);
    YAML::Node c = new_case(file, named, "serving", k.tool);
    add_scenario(c, file, context, "the server's model, GPUs and layout");
    c["serving"]["benchmark_tool"] = k.tool;
    workload(c["serving"]["workload"], c, file, j);
    metrics(c, file, j, k);
    if (j.contains("model_id") && j["model_id"].is_string())
        c["notes"].push_back("the benchmark's model: " + j["model_id"].get<std::string>());
    if (c["assumed"]) c["completeness"] = "mostly_complete";
    return c;
}

bool looks_like(const Source& file, const char* marker) {
    const size_t brace = file.text.find_first_not_of(" \t\r\n");
    return brace != std::string::npos && file.text[brace] == '{' &&
           file.text.find("\"output_throughput\"") != std::string::npos && file.text.find(marker) != std::string::npos;
}

// A case per non-empty line: SGLang appends a JSON object a run, vLLM's --append-result too (one
// object on one line otherwise: json.dump without indent, vllm/benchmarks/serve.py:1349-1355).
std::vector<YAML::Node> read_lines(const Source& file, const Context& context, const Keys& k) {
    std::vector<YAML::Node> out;
    std::istringstream in(file.text);
    std::string line;
    int number_of_line = 0;
    std::vector<std::pair<int, std::string>> lines;
    while (std::getline(in, line)) {
        ++number_of_line;
        line.erase(line.find_last_not_of(" \t\r") + 1);  // CRLF files, trailing blanks
        if (!line.empty()) lines.emplace_back(number_of_line, line);
    }
    // A result pretty-printed over several lines is one object.
    if (lines.size() > 1 && lines.front().second.back() != '}')
        return {one_case(file, context, parse_json(file, file.text, 1), k, 0)};
    for (size_t i = 0; i < lines.size(); ++i)
        out.push_back(one_case(file, context, parse_json(file, lines[i].second, lines[i].first), k,
                               lines.size() > 1 ? static_cast<int>(i) + 1 : 0));
    if (out.empty()) fail(file, "", "no result line");
    return out;
}

std::vector<YAML::Node> read_vllm(const Source& file, const Context& context) {
    return read_lines(file, context, kVllm);
}

std::vector<YAML::Node> read_sglang(const Source& file, const Context& context) {
    return read_lines(file, context, kSglang);
}

}  // namespace

Importer vllm_bench_importer() {
    return {"vLLM's benchmark result (vllm bench serve --save-result)",
            [](const Source& f) {
                return looks_like(f, "\"mean_e2el_ms\"") || looks_like(f, "\"total_token_throughput\"");
            },
            read_vllm};
}

Importer sglang_bench_importer() {
    return {"SGLang's bench_serving result (--output-file)",
            [](const Source& f) { return looks_like(f, "\"mean_e2e_latency_ms\""); }, read_sglang};
}

}  // namespace fathom::scenarios::imports
