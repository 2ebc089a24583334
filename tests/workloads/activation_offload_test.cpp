// Activation offload to the nodes' SSDs (stack.activation_offload: ssd; SSDTrain, papers.md T69;
// workloads/training/training_memory.h): the activations held on the device against their closed
// forms, with drives fast enough and with the drives' bandwidth as the bound, the step unchanged,
// pruning's estimate a lower bound, and the plan check.
#include "plans/constraints.h"
#include "plans/evaluate.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "workloads/training/training_memory.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

namespace {

// Llama 3 8B, context parallelism 2 on one DGX H100 (dp 4, one stage of 32 layers, 32
// micro-batches a step), `ssds` KIOXIA CM7-R drives (6.75 GB/s write, 14 GB/s read) a node.
plans::Scenario scenario(const std::string& offload, int ssds = 1, bool drives = true) {
    const std::string yaml =
        "name: offload-test\nmodel: llama3-8b\ncluster:\n  accelerator: h100-sxm-80gb\n  nodes: 1\n  gpus_per_node: "
        "8\n" +
        (drives ? "  ssd: nvme-gen5-14gbs\n  ssds_per_node: " + std::to_string(ssds) + "\n" : std::string()) +
        "parallel:\n  cp: 2\ntraining:\n  seq_len: 8192\n  global_batch_size: 128\n  micro_batch_size: 1\n"
        "  zero_stage: 1\nstack:\n  activation_offload: " +
        offload + "\n";
    return scenarios::load_scenario_text(yaml, "offload-test.yaml", testing::source_catalog());
}

workloads::TrainingMemory memory(const plans::Scenario& s, const std::vector<double>* compute_s = nullptr) {
    return workloads::estimate_training_memory(s.model, s.cluster, *s.training(), nullptr, compute_s);
}

}  // namespace

TEST_CASE("activation offload keeps two layers of a chunk when the drives keep up", "[offload]") {
    const plans::Scenario none = scenario("none"), ssd = scenario("ssd");
    const workloads::TrainingMemory a = memory(none), b = memory(ssd);
    REQUIRE(a.stages.size() == 1);
    // One stage, one micro-batch in flight (1F1B without a pipeline), 32 layers: without compute
    // times the estimate assumes the drives keep up (the least memory the plan can need): two of
    // the 32 layers' activations stay, 1/16 of them.
    CHECK(a.stages[0].peak_in_flight == 1);
    CHECK(b.stages[0].offloaded == 1);
    CHECK(b.stages[0].memory.activations == Approx(a.stages[0].memory.activations / 16).epsilon(1e-12));
    CHECK(b.stages[0].memory.weights == a.stages[0].memory.weights);
    CHECK(b.peak_bytes == Approx(a.peak_bytes - a.stages[0].memory.activations * 15 / 16).epsilon(1e-12));
}

TEST_CASE("activation offload moves what the drives can in the stage's compute time", "[offload]") {
    const plans::Scenario none = scenario("none"), ssd = scenario("ssd", 2);
    const double a = memory(none).stages[0].memory.activations;  // one micro-batch's, all 32 layers
    // Each of the 8 GPUs gets 2/8 of the node's two drives: 6.75 x 2 / 8 GB/s write, 14 x 2 / 8
    // read. A step offloads 30/32 of a micro-batch's activations for each of its 32 micro-batches;
    // in T = 10 s of compute the drives move f = T / (bytes (1/W + 1/R)) of it.
    const double w = 6.75e9 * 2 / 8, r = 14e9 * 2 / 8;
    const double per_step = a * 30.0 / 32 * 32;
    const double f = 10.0 / (per_step * (1 / w + 1 / r));
    REQUIRE(f < 1);
    const std::vector<double> ten = {10.0};
    const workloads::TrainingMemory m = memory(ssd, &ten);
    CHECK(m.stages[0].offloaded == Approx(f).epsilon(1e-12));
    CHECK(m.stages[0].memory.activations == Approx(a - f * a * 30 / 32).epsilon(1e-12));
    // Pruning's estimate (no compute times) is the least the plan can need.
    CHECK(memory(ssd).peak_bytes <= m.peak_bytes);
    // A long enough stage moves all of it.
    const std::vector<double> long_stage = {1e9};
    CHECK(memory(ssd, &long_stage).stages[0].offloaded == 1);
}

TEST_CASE("a step with activation offload keeps its time and frees what its drives move", "[offload]") {
    const plans::Outcome a = plans::evaluate(scenario("none", 8), testing::source_context());
    const plans::Outcome b = plans::evaluate(scenario("ssd", 8), testing::source_context());
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    const auto &x = *a.training(), &y = *b.training();
    // The transfers overlap the compute by construction: the step is the same replay.
    CHECK(y.step_time_s == x.step_time_s);
    // The fraction from the stage's own compute time in that replay.
    const std::vector<double> compute = {y.stages[0].compute_s};
    const workloads::TrainingMemory m = memory(scenario("ssd", 8), &compute);
    CHECK(y.stages[0].activations_offloaded == Approx(m.stages[0].offloaded).epsilon(1e-12));
    CHECK(y.stages[0].activations_offloaded > 0);
    CHECK(y.stages[0].activations_offloaded < 1);  // 8 drives do not keep up with this stage
    CHECK(y.peak_memory_bytes < x.peak_memory_bytes);
    CHECK(y.peak_memory_bytes == Approx(m.peak_bytes).epsilon(1e-12));
}

TEST_CASE("activation offload to SSDs needs SSDs", "[offload][bad-input]") {
    std::string key;
    try {
        const plans::Scenario s = scenario("ssd", 1, false);
        const auto v = plans::check_training_plan(s.model, s.cluster, *s.training());
        if (!v.empty()) key = v.front().key;
    } catch (const sim::InputError& e) {
        key = e.key();
    }
    CHECK(key == "stack.activation_offload");
}
