// The measured-format field names (scenarios/measured_schema): a case may hold only the fields the
// format defines, and an other_metrics variant may change only one configuration field, at any
// depth, which set_field writes into a copy of the case.
#include "scenarios/measured_schema.h"

#include "sim/error.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <string>

using namespace fathom;

namespace {

// A case with one field of every depth the format has (block, sub-block, sub-sub-block).
const char* kCase = R"(id: srv-x
kind: serving
source: {type: repo, repo: a/b}
model: {name: m, layers: 2, moe: {num_experts: 8, top_k: 2}}
serving:
  engine: vllm
  workload: {arrival: poisson, request_rate: 2.0, slo: {ttft_ms: 500}}
metric: ttft_ms
value: 40
unit: ms
statistic: mean
other_metrics:
- metric: ttft_ms
  value: 55
  unit: ms
  statistic: mean
  variant: {serving.workload.request_rate: 6.0, model.moe.top_k: 4}
notes: [n]
)";

// The input error check_case_fields raises for `text` (empty when it raises none).
sim::InputError refusal(const std::string& text) {
    try {
        scenarios::check_case_fields(YAML::Load(text), "cases.yaml");
    } catch (const sim::InputError& e) {
        return e;
    }
    return sim::InputError("");
}

std::string with_variant(const std::string& path) {
    std::string c = kCase;
    const std::string old = "{serving.workload.request_rate: 6.0, model.moe.top_k: 4}";
    return c.replace(c.find(old), old.size(), "{" + path + ": 1}");
}

}  // namespace

TEST_CASE("a measured case holds only the format's fields, a variant names one configuration field", "[measured]") {
    CHECK(refusal(kCase).bare_message().empty());
    // Unknown at each depth: the dotted path and the line of the key.
    const auto top = refusal(std::string(kCase) + "speed: 3\n");
    CHECK(top.key() == "speed");
    CHECK(top.line() == 19);  // after the 18 lines of kCase
    const auto deep = refusal(std::string(kCase).replace(std::string(kCase).find("ttft_ms: 500"), 12, "ttft: 500"));
    CHECK(deep.key() == "serving.workload.slo.ttft");
    CHECK(deep.line() == 7);
    // Variant paths: a leaf under a configuration block at any depth, nothing else.
    for (const char* ok :
         {"serving.workload.request_rate", "model.moe.top_k", "training.lora.rank", "benchmark.size_bytes"})
        CHECK(refusal(with_variant(ok)).bare_message().empty());
    for (const char* bad :
         {"training", "model.moe", "serving.workload.bogus", "source.repo", "notes", "value", "speed"}) {
        INFO(bad);
        const auto e = refusal(with_variant(bad));
        CHECK(e.key() == std::string("other_metrics[0].variant.") + bad);
        CHECK(e.line() == 17);
    }
}

TEST_CASE("set_field writes a variant's value at its depth, creating blocks on the way", "[measured]") {
    YAML::Node c = YAML::Load(kCase);
    scenarios::set_field(c, "serving.workload.request_rate", YAML::Node(6.0));
    scenarios::set_field(c, "training.lora.rank", YAML::Node(16));
    CHECK(c["serving"]["workload"]["request_rate"].as<double>() == 6.0);
    CHECK(c["serving"]["workload"]["arrival"].as<std::string>() == "poisson");  // siblings kept
    CHECK(c["serving"]["engine"].as<std::string>() == "vllm");
    CHECK(c["training"]["lora"]["rank"].as<int>() == 16);  // blocks the case lacked
    // A copy: the case it started from is unchanged (the mappings on the path are the copy's own),
    // and the value is the given node itself, with its line.
    const YAML::Node original = YAML::Load(kCase);
    const YAML::Node rate = YAML::Load("a: 1\nb: 7")["b"];
    const YAML::Node changed = scenarios::with_field(original, "serving.workload.request_rate", rate);
    CHECK(changed["serving"]["workload"]["request_rate"].Mark().line == 1);
    CHECK(original["serving"]["workload"]["request_rate"].as<std::string>() != "7");
    CHECK(changed["serving"]["engine"].Mark().line == original["serving"]["engine"].Mark().line);
}
