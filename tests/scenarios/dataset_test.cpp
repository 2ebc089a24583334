// Serving datasets of the catalog (workloads/datasets/, traffic.dataset): their length tables, a
// scenario drawing from one, an explicit length replacing the dataset's, bad names and files, and a
// measured case naming one.
#include "scenarios/measured.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/measured_fixture.h"
#include "tests/support/serving_fixture.h"
#include "tests/support/traffic_fixture.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>

using namespace fathom;

using testing::serve;

namespace {

const std::string kBase =
    "kind: serving\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, "
    "gpus_per_node: 1}\nserving: {tp: 1, engine: vllm}\n";

}  // namespace

TEST_CASE("a serving dataset's lengths are its table's: 100 equal-probability bins per length", "[scenarios]") {
    // workloads/datasets/azure-conv-2023.yaml, from the Azure 2023 conversation trace (19,366
    // requests; prompt mean 1154.7, output mean 211.1): each length is 100 bins of weight 1, the
    // medians of its percentile slices, whose means are 1152.4 and 210.3 (within 0.4% of the table's).
    const auto& d = testing::source_catalog().dataset("azure-conv-2023");
    CHECK(d.requests == 19366);
    REQUIRE(d.prompt.bins.size() == 100);
    REQUIRE(d.output.bins.size() == 100);
    CHECK(d.prompt.expected() == Approx(1152.4).epsilon(1e-3));
    CHECK(d.output.expected() == Approx(210.3).epsilon(1e-3));
    CHECK(d.prompt.expected() == Approx(1154.7).epsilon(0.004));
    CHECK_FALSE(d.source.empty());
}

TEST_CASE("traffic.dataset draws prompts and outputs from the dataset, a length given replaces its own",
          "[scenarios][serving]") {
    // 100,000 requests drawn from azure-code-2023 (prompt mean 2048.6, output mean 26.7 in the
    // histograms; standard errors 0.2% and 0.3% at that count): the drawn means within 1%.
    using workloads::serving::ServingPlan;
    const std::string traffic = "traffic: {arrival: offline, num_requests: 100000, dataset: azure-code-2023";
    auto means = [](const plans::Scenario& s) {
        const auto& plan = std::get<ServingPlan>(s.plan);
        auto source = workloads::serving::make_synthetic_source(plan.traffic.synthetic, 1);
        const auto requests = testing::all(*source);
        double prompt = 0, output = 0;
        for (const auto& r : requests) {
            prompt += static_cast<double>(r.prompt_tokens);
            output += static_cast<double>(r.output_tokens);
        }
        const auto n = static_cast<double>(requests.size());
        return std::make_pair(prompt / n, output / n);
    };
    const auto drawn = means(testing::serving_scenario(kBase + traffic + "}\n"));
    CHECK(drawn.first == Approx(2048.6).epsilon(0.01));
    CHECK(drawn.second == Approx(26.7).epsilon(0.01));
    const auto fixed = means(testing::serving_scenario(kBase + traffic + ", output: 100}\n"));
    CHECK(fixed.second == 100);
    CHECK(fixed.first == drawn.first);  // the prompts are the same draws (their own stream)
    // And a short run of it serves every request.
    const auto r = serve(testing::serving_scenario(
        kBase + "traffic: {arrival: offline, num_requests: 200, dataset: azure-code-2023}\n"));
    CHECK(r.requests == 200);
}

TEST_CASE("an unknown dataset, or a dataset file without a length, is an input error naming the key",
          "[scenarios][bad-input]") {
    try {
        testing::serving_scenario(kBase + "traffic: {arrival: offline, num_requests: 10,\n  dataset: sharegpt}\n");
        FAIL("accepted");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "traffic.dataset");
        CHECK(e.line() == 6);
        CHECK(std::string(e.what()).find("unknown dataset 'sharegpt'; known: arxiv-summarization") !=
              std::string::npos);
    }
    workloads::LengthDistribution p, o;
    const auto node = scenarios::load_yaml_string(
        "kind: dataset\nprompt: {distribution: histogram, bins: [1, 2], "
        "weights: [1, 1]}\n",
        "bad_dataset.yaml");
    CHECK_THROWS_AS(scenarios::read_dataset_lengths(node, p, o), sim::InputError);
}

TEST_CASE("a measured case naming a catalog dataset is simulated from its table, one without a table is not",
          "[scenarios][compare]") {
    YAML::Node c = YAML::Clone(testing::frozen_case("srv-vllm0151-qwen2-5-7b-instruct-tp1-roleplay-1-1-exp64"));
    REQUIRE(c);
    auto workload = c["serving"]["workload"];
    workload.remove("input_len");
    workload.remove("output_len");
    workload.remove("shared_prefix");
    workload["dataset"] = "azure-conv-2023";
    const auto r = testing::compare_one(c, "dataset_case.yaml");
    REQUIRE(r.size() == 1);
    INFO(r[0].reason);
    CHECK(r[0].ok());
    CHECK(testing::stated(r[0], "prompt and output lengths from the azure-conv-2023 table"));
    workload["dataset"] = "sharegpt";
    const auto none = testing::compare_one(c, "dataset_case_none.yaml");
    REQUIRE(none.size() == 1);
    CHECK_FALSE(none[0].ok());
    CHECK(none[0].reason.find("sharegpt dataset, which has no length table") != std::string::npos);
}
