// The RL plan search (plans/rl_search.h): the product of its axes less what its pruning rules
// drop, each candidate the RL evaluation of its plan whatever the candidates share, the ranking by
// samples per second per GPU, the same at any thread count.
#include "plans/rl_search.h"

#include "plans/rl_evaluate.h"
#include "plans/search_keys.h"
#include "scenarios/scenario.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

namespace {

const char* kScenario = R"(kind: rl
seed: 2
model: qwen3-8b
cluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}
rl: {prompts: 16, samples: 8, prompt: 512, response: {distribution: lognormal, mean: 400, stddev: 400, max: 2048},
     layout: colocated, minibatches: 2, iterations: 3}
serving: {engine: vllm, tp: 2, prefix_caching: true, gpu_memory_utilization: 0.6}
parallel: {tp: 1}
training: {seq_len: 8192, micro_batch_size: 1, zero_stage: 3, recompute: full}
stack: {preset: torchtitan, dtype: bf16}
search: {rl_layout: [colocated, disaggregated], rl_rollout_gpus: [2, 4, 8], rl_rollout_tp: [1, 2],
         rl_staleness: [0, 1]}
)";

}  // namespace

TEST_CASE("an RL search crosses its axes, prunes, and ranks by samples per second per GPU", "[rl][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = scenarios::load_scenario_text(kScenario, "search.yaml", *ctx.catalog);
    REQUIRE(s.search);
    plans::SearchOptions one;
    one.threads = 1;
    const plans::RlSearchResult r = plans::search_rl(s.model, s.cluster, *s.rl(), *s.search, ctx, s.seed, one);
    // 2 layouts x 3 pools x 2 TPs x 2 bounds = 24 combinations. Colocated (12): the pool axis stands
    // for nothing, its first value only (colocated-one-pool drops 2 pools x 2 TPs x 2 bounds = 8),
    // and no bound above 0 (colocated-synchronous drops 2), leaving 2; disaggregated (12): a pool of
    // 8 leaves the trainer nothing (pools-in-cluster drops 2 TPs x 2 bounds = 4), leaving 8.
    // Candidates: 2 + 8 = 10.
    REQUIRE(r.candidates.size() == 10);
    CHECK(r.dropped == std::vector<int64_t>{8, 2, 4, 0});
    CHECK(r.evaluated == 10);
    // Each candidate's numbers are its plan's, evaluated alone (the shared phases change nothing).
    for (const plans::RlCandidate& c : r.candidates) {
        const plans::Outcome o = plans::evaluate_rl(s.model, s.cluster, c.plan, ctx, s.seed);
        REQUIRE(o.ok());
        CHECK(c.iteration_s == o.rl()->iteration_s);
        CHECK(c.samples_per_s_per_gpu == o.rl()->samples_per_s_per_gpu);
        CHECK(c.score == c.samples_per_s_per_gpu);
    }
    // Ranked best first, ties to the lower index.
    for (size_t k = 1; k < r.ranking.size(); ++k)
        CHECK(r.candidates[static_cast<size_t>(r.ranking[k - 1])].score >=
              r.candidates[static_cast<size_t>(r.ranking[k])].score);
    // The same at two threads.
    plans::SearchOptions two;
    two.threads = 2;
    const plans::RlSearchResult r2 = plans::search_rl(s.model, s.cluster, *s.rl(), *s.search, ctx, s.seed, two);
    REQUIRE(r2.candidates.size() == r.candidates.size());
    CHECK(r2.ranking == r.ranking);
    for (size_t i = 0; i < r.candidates.size(); ++i) CHECK(r2.candidates[i].score == r.candidates[i].score);
}

TEST_CASE("an RL axis in another kind's scenario is refused, naming it", "[rl][search]") {
    const auto& cat = *testing::source_context().catalog;
    CHECK_THROWS_WITH(scenarios::load_scenario(testing::example("quickstart.yaml"), cat, {"search.rl_staleness=[1]"}),
                      Catch::Contains("search.rl_staleness") && Catch::Contains("rl plans"));
    CHECK_THROWS_WITH(
        scenarios::load_scenario(testing::example("rl-grpo-qwen3-8b-8xh100.yaml"), cat, {"search.replicas=[1]"}),
        Catch::Contains("search.replicas") && Catch::Contains("serving plans"));
}
