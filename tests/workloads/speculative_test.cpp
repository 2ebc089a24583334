// Speculative decoding (workloads/serving/speculative.h, draft_cost.h): the acceptance model's
// closed forms, a verification's tokens per target step, the drafter's time, the speed-up falling
// with batch size, and bad settings refused by key.
#include "workloads/serving/speculative.h"

#include "scenarios/catalog.h"
#include "scenarios/measured.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"
#include "tests/support/serving_fixture.h"
#include "workloads/serving/draft_cost.h"
#include "workloads/serving/serving_memory.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace fathom;
using namespace fathom::workloads::serving;

using testing::serve;

namespace {

// One H100 serving Llama 3 8B to `clients` closed-loop clients, 512-token prompts, 256-token outputs,
// with `spec` (the serving.speculative block's lines) when given.
plans::Scenario scenario(int clients, const std::string& spec, int requests = 64) {
    std::string yaml =
        "kind: serving\nseed: 3\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 1}\n"
        "serving:\n  engine: vllm\n  tp: 1\n";
    if (!spec.empty()) yaml += "  speculative:\n" + spec;
    yaml += "traffic: {arrival: concurrency, concurrency: " + std::to_string(clients) +
            ", num_requests: " + std::to_string(requests) + ", prompt: 512, output: 256}\n";
    return testing::serving_scenario(yaml);
}

}  // namespace

TEST_CASE("the acceptance model: (1 - a^(k+1)) / (1 - a) tokens a verification, and its inverse", "[serving]") {
    // k = 3 at a = 0.7: 1 + 0.7 + 0.49 + 0.343 = 2.533 tokens; a = 1: k + 1; a = 0: 1.
    CHECK(expected_tokens(0.7, 3) == Approx(2.533));
    CHECK(expected_tokens(1.0, 3) == 4.0);
    CHECK(expected_tokens(0.0, 3) == 1.0);
    CHECK(rate_for_length(2.533, 3) == Approx(0.7).epsilon(1e-6));
    CHECK(rate_for_length(4.0, 3) == 1.0);
    // The draws: 200,000 verifications average 1 + E[accepted] within 1%, bounded by k.
    double sum = 0;
    for (int64_t r = 0; r < 2000; ++r)
        for (int64_t pos = 1; pos <= 100; ++pos) {
            const int n = accepted_drafts(0.7, 3, 11, r, pos);
            REQUIRE(n >= 0);
            REQUIRE(n <= 3);
            sum += 1 + n;
        }
    CHECK(sum / 200000 == Approx(expected_tokens(0.7, 3)).epsilon(0.01));
    // The scenario's seed reaches the draws: another seed gives another sequence of verifications.
    int differ = 0;
    for (int64_t pos = 1; pos <= 100; ++pos)
        differ += accepted_drafts(0.7, 3, 11, 5, pos) != accepted_drafts(0.7, 3, 12, 5, pos) ? 1 : 0;
    CHECK(differ > 20);
}

TEST_CASE("with every draft accepted and free drafts a decode emits k + 1 tokens a target step", "[serving]") {
    // n-gram drafts cost no GPU time (and the engine's time around them is set to none). One client
    // at a time, 256 output tokens: the prefill samples
    // the first, then ceil(255 / (k + 1)) verifications the rest: with k = 3, 64 a request instead
    // of 255, so 64 requests run 64 x 65 iterations instead of 64 x 256.
    const ServingReport plain = serve(scenario(1, ""));
    const ServingReport spec = serve(scenario(
        1,
        "    method: ngram\n    tokens: 3\n    acceptance: 1\n    iteration_overhead: 0 s\n    step_overhead: 0 s\n"));
    CHECK(plain.iterations == 64 * 256);
    CHECK(spec.iterations == 64 * 65);
    // At batch 1 a verification of 4 tokens costs about what a decode of 1 does (both read the
    // weights once), so the time per output token falls by about 255 / 64 = 3.98: 3.5 to 4.1 (the
    // attention and logits of 4 positions are not free; on the H100's measured GEMM table a 4-row
    // GEMM runs a little faster than a 1-row one, cuBLAS's GEMV path: 6.70 against 6.77 ms a step).
    const double ratio = plain.tpot_s.mean / spec.tpot_s.mean;
    CHECK(ratio > 3.5);
    CHECK(ratio < 4.1);
}

TEST_CASE("an EAGLE head's draft steps cost a decoder layer and the head each", "[serving]") {
    // The drafter of method eagle is one decoder layer of the target's shape and its output head:
    // its k steps cost k decode iterations of a one-layer Llama 3 8B (no CPU time of their own).
    const auto& cat = testing::source_catalog();
    const auto& model = cat.model("llama3-8b");
    const hardware::ClusterSpec cluster = testing::h100_cluster(1);
    PoolLayout pool;
    pool.accelerator = cluster.accelerator;
    const auto cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto net = hardware::make_analytical_network(cluster);
    SpeculativeSettings eagle;
    eagle.method = SpecMethod::Eagle;
    eagle.tokens = 4;
    eagle.acceptance = 0.7;
    DraftCoster drafts(model, eagle, pool, models::KernelStack{}, *cost, *net);
    models::ModelSpec one = model;
    one.layers = 1;
    IterationCoster layer(one, pool, models::KernelStack{}, EngineSettings{}, *cost, *net);
    IterationShape decode;
    decode.decodes = decode.samples = decode.sequences = 16;
    decode.decode_kv = 16 * 800;
    CHECK(drafts.seconds(16, 16 * 800) == Approx(4 * layer.exact(decode).total()).epsilon(1e-9));
    // n-gram lookup: no GPU time.
    SpeculativeSettings ngram = eagle;
    ngram.method = SpecMethod::Ngram;
    CHECK(DraftCoster(model, ngram, pool, models::KernelStack{}, *cost, *net).seconds(16, 16 * 800) == 0);
}

TEST_CASE("speculation's speed-up falls with batch size and turns into a slowdown near saturation", "[serving]") {
    // EAGLE, 3 drafts at 0.6 each (2.18 tokens a verification), under vLLM's preset (its time around
    // the drafter included). At one client a decode reads the weights for one token, so verifying
    // four costs little more and output throughput rises 1.47x (the head's three draft steps and the
    // engine's 1.4 ms are not free). As the batch grows the step turns compute-bound and verifying 4
    // positions a sequence costs more and more of 4 decodes: 1.36x at 16 clients, 1.25x at 64, 1.01x
    // at 256 (EAGLE-3's SGLang table on an H100, Llama 3.1 8B: 1.81x at batch 2, 1.48x at 16, 1.38x at
    // 64). With drafts accepted at 0.3 (1.39 tokens) 256 clients run 0.76x as fast as without
    // (vLLM's blog, Oct 2024: 1.4x slower at high QPS).
    auto speedup = [&](int clients, double a) {
        const std::string eagle = "    method: eagle\n    tokens: 3\n    acceptance: " + std::to_string(a) + "\n";
        const ServingReport plain = serve(scenario(clients, "", 2 * clients + 16));
        const ServingReport spec = serve(scenario(clients, eagle, 2 * clients + 16));
        return spec.output_tokens_per_s / plain.output_tokens_per_s;
    };
    const double one = speedup(1, 0.6), sixteen = speedup(16, 0.6), many = speedup(256, 0.6);
    CHECK(one > 1.4);
    CHECK(sixteen < one);
    CHECK(many < sixteen);
    CHECK(many < 1.1);
    CHECK(speedup(256, 0.3) < 1.0);
}

TEST_CASE("speculative settings that cannot work are refused by key", "[serving][bad-input]") {
    // Each at load, with its file, line and key.
    auto refusal = [](const std::string& spec) {
        try {
            scenario(1, spec);
        } catch (const sim::InputError& e) {
            return std::string(e.what());
        }
        FAIL("accepted");
        return std::string();
    };
    CHECK_THAT(refusal("    method: eagle\n    acceptance: 0.5\n"),
               Catch::Contains("test.yaml:6: key 'serving.speculative.tokens'"));
    CHECK_THAT(refusal("    method: eagle\n    tokens: 3\n"), Catch::Contains("key 'serving.speculative.acceptance'"));
    CHECK_THAT(refusal("    method: eagle\n    tokens: 3\n    acceptance: 0.5\n    acceptance_length: 2\n"),
               Catch::Contains("give one of serving.speculative.acceptance"));
    CHECK_THAT(refusal("    method: eagle\n    tokens: 3\n    acceptance_length: 5\n"),
               Catch::Contains("key 'serving.speculative.acceptance_length'") && Catch::Contains("at most 4 tokens"));
    CHECK_THAT(refusal("    method: draft\n    tokens: 3\n    acceptance: 0.5\n"),
               Catch::Contains("key 'serving.speculative.method'") && Catch::Contains("draft_model"));
    // Keys without a method (speculation turned off, as `--set serving.speculative.method=none` does):
    // a warning each, not an error.
    const plans::Scenario off = scenario(1, "    method: none\n    tokens: 3\n    acceptance: 0.5\n");
    REQUIRE(off.warnings.size() == 2);
    CHECK(off.warnings[0].key == "serving.speculative.tokens");
    CHECK_THAT(off.warnings[1].message, Catch::Contains("speculative decoding is off"));
    // Out of range and unknown drafters: at load, with the line.
    CHECK_THROWS_WITH(scenario(1, "    method: eagle\n    tokens: 3\n    acceptance: 1.5\n"),
                      Catch::Contains("serving.speculative.acceptance") && Catch::Contains("test.yaml:"));
    CHECK_THROWS_WITH(
        scenario(1, "    method: draft\n    tokens: 3\n    acceptance: 0.5\n    draft_model: llama-tiny\n"),
        Catch::Contains("serving.speculative.draft_model") && Catch::Contains("llama-tiny"));
}

TEST_CASE("a drafter's weights and cache take room from the target's KV cache", "[serving]") {
    // Llama 3 70B at TP 4 with Llama 3 8B drafting: the draft's weights add its parameters x 2 bytes
    // / 4 a GPU, and each 16-token block also holds the draft's cache: 16 tokens x 32 layers x K and V
    // x 2 of its 8 KV heads a rank x 128 dims x 2 bytes = 262,144 bytes. An EAGLE head adds one of the
    // target's layers: its weights (a decoder layer's) and one layer of cache a block.
    const auto& cat = testing::source_catalog();
    const auto& target = cat.model("llama3-70b");
    const auto& draft = cat.model("llama3-8b");
    PoolLayout pool;
    pool.tp = 4;
    pool.accelerator = cat.accelerator("h100-sxm-80gb");
    const ReplicaMemory plain = replica_memory(target, pool, {}, {}, {}, {});
    SpeculativeSettings spec;
    spec.method = SpecMethod::Draft;
    spec.tokens = 4;
    spec.acceptance = 0.7;
    spec.draft = std::make_shared<models::ModelSpec>(draft);
    const ReplicaMemory with = replica_memory(target, pool, {}, {}, {}, {}, spec);
    CHECK(with.weight_bytes - plain.weight_bytes == Approx(draft.total_params(0) * 2.0 / 4));
    CHECK(with.block_bytes - plain.block_bytes == Approx(16.0 * 32 * 2 * 2 * 128 * 2));
    CHECK(with.kv_blocks < plain.kv_blocks);
    spec.method = SpecMethod::Eagle;
    const ReplicaMemory eagle = replica_memory(target, pool, {}, {}, {}, {}, spec);
    CHECK(eagle.block_bytes == Approx(plain.block_bytes * 81.0 / 80));
    CHECK(eagle.weight_bytes > plain.weight_bytes);
    CHECK(eagle.weight_bytes - plain.weight_bytes < 2e9);  // one of 80 layers of 70B / 4: ~0.4 GB
}

TEST_CASE("published speculative runs: vLLM V1's EAGLE heads on Llama 3.1 8B at batch 1", "[serving][compare]") {
    // scenarios/measured-speculative.yaml. Without speculation the time per output token is within
    // 5% (6.75 ms against 7.07). vLLM's preset carries the engine's time around its drafter, fitted
    // on the EAGLE-1 rows of issue #20780 (0.99 ms a speculating iteration, 0.145 ms a draft step:
    // in-sample, within 1%). Held out: that EAGLE-3 rows are 9-18% too fast (without the
    // overheads 22-30%; EAGLE-3's fused three-layer input and its first step over the accepted
    // positions cost more than a layer and the head), and PR #16937's output throughputs (an April
    // 2025 build, prefill included) 12-16% high, where vanilla is 11% high.
    const auto results = scenarios::compare_measured(
        std::string(FATHOM_SOURCE_DIR) + "/scenarios/measured-speculative.yaml", testing::source_context());
    REQUIRE(results.size() == 18);
    for (const auto& r : results) {
        INFO(r.id << " " << r.reason << " measured " << r.measured << " predicted " << r.predicted);
        REQUIRE(r.ok());
        const bool vanilla = r.id.find("vanilla") != std::string::npos;
        const bool tpot = r.id.find("-tpot") != std::string::npos;
        if (vanilla) CHECK(std::fabs(r.error) < (tpot ? 0.05 : 0.12));
        else if (tpot && r.id.find("eagle1") != std::string::npos) CHECK(std::fabs(r.error) < 0.01);
        else if (tpot) CHECK((r.error < -0.08 && r.error > -0.18));
        else CHECK((r.error > 0.10 && r.error < 0.17));
    }
}

TEST_CASE("measured acceptance by draft position: a catalog profile drives the draws", "[serving]") {
    // GLM-4.5-Air's MTP module on GPQA-Main (SpecDecode-Bench): 0.92, 0.68, 0.38 of verifications
    // accept the draft at positions 1, 2, 3. A verification of 3 drafts emits 1 + 0.92 + 0.68 + 0.38
    // = 2.98 tokens on average; of 2 drafts, 2.60. Each draft is accepted, given the ones before
    // it, with 0.92, 0.68 / 0.92 and 0.38 / 0.68: 200,000 draws reproduce each position's share
    // within 0.5 points.
    const auto& cat = testing::source_catalog();
    const auto& glm = cat.acceptance_profile("glm-4.5-air-mtp-gpqa");
    SpeculativeSettings s;
    s.method = SpecMethod::Mtp;
    s.tokens = 3;
    s.positions = glm.positions;
    CHECK(s.mean_tokens() == Approx(2.98));
    s.tokens = 2;
    CHECK(s.mean_tokens() == Approx(2.60));
    std::vector<int> at_least(4, 0);
    for (int64_t r = 0; r < 2000; ++r)
        for (int64_t pos = 0; pos < 100; ++pos) {
            const int n = accepted_drafts(glm.positions, 3, 5, r, pos);
            REQUIRE(n >= 0);
            REQUIRE(n <= 3);
            for (int i = 1; i <= n; ++i) ++at_least[static_cast<size_t>(i)];
        }
    for (size_t i = 1; i <= 3; ++i) CHECK(std::abs(at_least[i] / 200000.0 - glm.positions[i - 1]) < 0.005);
    // In a scenario: the profile replaces acceptance; more drafts than it measured are refused.
    const plans::Scenario sc =
        scenario(1, "    method: mtp\n    tokens: 3\n    acceptance_profile: glm-4.5-air-mtp-gpqa\n");
    CHECK(sc.serving()->speculative.positions.size() == 3);
    const ServingReport r = serve(sc);
    CHECK(r.output_tokens_per_s > 0);
    CHECK_THROWS_WITH(scenario(1, "    method: mtp\n    tokens: 4\n    acceptance_profile: glm-4.5-air-mtp-gpqa\n"),
                      Catch::Contains("serving.speculative.tokens") && Catch::Contains("measured 3 positions"));
    CHECK_THROWS_WITH(scenario(1, "    method: mtp\n    tokens: 3\n    acceptance_profile: glm-5\n"),
                      Catch::Contains("serving.speculative.acceptance_profile") && Catch::Contains("glm-5"));
    CHECK_THROWS_WITH(
        scenario(1,
                 "    method: mtp\n    tokens: 3\n    acceptance: 0.5\n    acceptance_profile: glm-4.5-air-mtp-gpqa\n"),
        Catch::Contains("give one of"));
}

TEST_CASE("an acceptance profile whose rates rise or leave [0, 1] is refused", "[serving][bad-input]") {
    auto parse = [](const std::string& value) {
        return scenarios::parse_acceptance_profile(scenarios::load_yaml_string(
            "kind: speculative-acceptance\nid: x\nname: x\ntarget: x\nmethod: eagle\ndataset: x\npositions: {value: " +
                value + ", source: \"test\"}\n",
            "x.yaml"));
    };
    CHECK(parse("[0.8, 0.5]").positions.size() == 2);
    CHECK_THROWS_WITH(parse("[0.5, 0.8]"), Catch::Contains("x.yaml:7") && Catch::Contains("must not rise"));
    CHECK_THROWS_WITH(parse("[1.2]"), Catch::Contains("between 0 and 1"));
    CHECK_THROWS_WITH(parse("[]"), Catch::Contains("no positions"));
}
