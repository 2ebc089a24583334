// Serving plan search (plans/serving_search.h): the enumeration's size in closed form, the best
// plan equal to brute-force evaluation of every plan, identical results at any thread count,
// pruned and out-of-memory plans with their reasons, the cost, energy and capacity columns against
// their definitions, and the `search` section's checks of a serving scenario.
#include "plans/serving_search.h"

#include "plans/capacity.h"
#include "plans/search_keys.h"
#include "scenarios/scenario.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace fathom;

namespace {

const std::string kBase =
    "kind: serving\nseed: 3\nmodel: llama3-8b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
    "serving: {engine: vllm, tp: 1, replicas: 2, router: least-outstanding}\n"
    "traffic: {arrival: poisson, rate: 8, num_requests: 300, prompt: {distribution: lognormal, mean: 1500, stddev: "
    "600, max: 6000},"
    " output: {distribution: lognormal, mean: 200, stddev: 100, max: 800}}\n"
    "slo: {ttft: 300 ms, tpot: 15 ms, target: 0.9}\n";

plans::Scenario scenario(const std::string& extra = "") {
    return scenarios::parse_scenario(scenarios::load_yaml_string(kBase + extra, "serving-search.yaml"),
                                     testing::source_catalog());
}

// tp {1, 2} x replicas {1, 2, 4} x (aggregated, and every xPyD split) x token budgets {2048, 8192}.
plans::SearchSpace small_space() {
    plans::SearchSpace s;
    plans::set_search_key(s, "search.tp", std::vector<int64_t>{1, 2});
    plans::set_search_key(s, "search.replicas", std::vector<int64_t>{1, 2, 4});
    plans::set_search_key(s, "search.disaggregation", std::string("off,on"));
    plans::set_search_key(s, "search.max_num_batched_tokens", std::vector<int64_t>{2048, 8192});
    return s;
}

std::string error_of(const std::string& extra) {
    try {
        scenario(extra);
    } catch (const sim::InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the serving enumeration crosses the axes, with every xPyD split of a replica count",
          "[plans][search][serving]") {
    const plans::Scenario s = scenario();
    const auto plans =
        plans::enumerate_serving_plans(s.model, s.cluster, *s.serving(), small_space(), testing::source_catalog());
    // Per tp: replicas 1 -> aggregated only; 2 -> aggregated, 1P1D; 4 -> aggregated, 1P3D, 2P2D,
    // 3P1D: 1 + 2 + 4 = 7 layouts, x 2 tp x 2 budgets = 28.
    REQUIRE(plans.size() == 28);
    int disaggregated = 0;
    for (const auto& p : plans) {
        if (!p.disaggregated()) continue;
        ++disaggregated;
        CHECK(p.prefill->tp == p.decode->tp);
        CHECK((p.prefill->replicas + p.decode->replicas == 2 || p.prefill->replicas + p.decode->replicas == 4));
    }
    CHECK(disaggregated == (1 + 3) * 2 * 2);
    // The first candidates follow the axis order: tp 1, 1 replica, budget 2048 then 8192.
    CHECK(plans[0].replica.tp == 1);
    CHECK(plans[0].batching.max_num_batched_tokens == 2048);
    CHECK(plans[1].batching.max_num_batched_tokens == 8192);
}

TEST_CASE("the serving search's best plan is the best of brute-force evaluation", "[plans][search][serving]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = scenario();
    const auto& base = *s.serving();
    const auto r = plans::search_serving(s.model, s.cluster, base, small_space(), ctx, s.seed);
    REQUIRE(r.candidates.size() == 28);
    // Brute force: every plan simulated on its own; the best meets the SLO target and has the most
    // SLO-meeting requests per second per GPU (the first of equals).
    const auto plans =
        plans::enumerate_serving_plans(s.model, s.cluster, base, small_space(), testing::source_catalog());
    int64_t best = -1;
    double best_score = -1;
    int evaluated = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
        const plans::Outcome o = plans::evaluate_serving(s.model, s.cluster, plans[i], ctx, s.seed);
        REQUIRE(o.ok());
        ++evaluated;
        const auto& rep = *o.serving();
        const auto& c = r.candidates[i];
        CHECK(c.goodput_requests_per_s == rep.goodput_requests_per_s);  // bit-identical
        CHECK(c.ttft_p90_s == rep.ttft_s.p90);
        CHECK(c.tpot_p50_s == rep.tpot_s.p50);  // the search's candidates share iteration costs, alone none
        CHECK(c.output_tokens_per_s == rep.output_tokens_per_s);
        if (rep.slo_attainment < base.slo.target_attainment) continue;
        const double score = rep.goodput_requests_per_s / plans[i].gpus();
        if (score > best_score) best_score = score, best = static_cast<int64_t>(i);
    }
    CHECK(r.evaluated == evaluated);
    REQUIRE(best >= 0);
    CHECK(r.ranking.front() == best);
    // Plans meeting the target come first, by score; the rest after them.
    bool met = true;
    for (size_t k = 0; k < r.ranking.size(); ++k) {
        const auto& c = r.candidates[static_cast<size_t>(r.ranking[k])];
        if (!c.meets_slo()) met = false;
        CHECK((c.meets_slo() || !met));
        if (k > 0 && c.meets_slo()) CHECK(r.candidates[static_cast<size_t>(r.ranking[k - 1])].score >= c.score);
    }
}

TEST_CASE("a serving search gives identical results at one and at two threads", "[plans][search][serving]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = scenario();
    plans::SearchOptions one, two;
    one.threads = 1;
    two.threads = 2;
    const auto a = plans::search_serving(s.model, s.cluster, *s.serving(), small_space(), ctx, s.seed, one);
    const auto b = plans::search_serving(s.model, s.cluster, *s.serving(), small_space(), ctx, s.seed, two);
    REQUIRE(a.candidates.size() == b.candidates.size());
    CHECK(a.ranking == b.ranking);
    for (size_t i = 0; i < a.candidates.size(); ++i) {
        CHECK(a.candidates[i].ttft_p50_s == b.candidates[i].ttft_p50_s);
        CHECK(a.candidates[i].output_tokens_per_s == b.candidates[i].output_tokens_per_s);
        CHECK(a.candidates[i].pareto_cost == b.candidates[i].pareto_cost);
    }
}

TEST_CASE("serving candidates that cannot run say why, cost and energy follow their definitions",
          "[plans][search][serving]") {
    const auto& ctx = testing::source_context();
    // Llama 3 70B on H100 and H200: tp 1 holds 141 GB of bf16 weights (more than either device);
    // tp 2 holds 70.6 GB, which leaves a KV cache of about 23k tokens of the H100's 76.5 GB usable
    // (0.9 of its memory) and many more on the H200; 8 replicas of tp 2 need 16 GPUs of the 8.
    // (This test's name held a ';', which catch_discover_tests splits at: ctest ran an empty test
    // in its place, and its H100 expectation, written for an older memory model, went unnoticed.)
    const plans::Scenario s = scenarios::parse_scenario(
        scenarios::load_yaml_string(
            "kind: serving\nmodel: llama3-70b\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
            "serving: {engine: vllm, tp: 4, replicas: 2}\ntraffic: {arrival: poisson, rate: 2, num_requests: 100, "
            "prompt: 1000, "
            "output: 100}\nslo: {ttft: 2 s, tpot: 100 ms}\n",
            "s.yaml"),
        testing::source_catalog());
    plans::SearchSpace space;
    plans::set_search_key(space, "search.accelerator", std::string("h100-sxm-80gb,h200-sxm-141gb"));
    plans::set_search_key(space, "search.tp", std::vector<int64_t>{1, 2});
    plans::set_search_key(space, "search.replicas", std::vector<int64_t>{1, 8});
    space.prices = {{"h100-sxm-80gb", 3.0}, {"h200-sxm-141gb", 4.0}};
    space.objective = plans::Objective::Cost;
    const auto r = plans::search_serving(s.model, s.cluster, *s.serving(), space, ctx, s.seed);
    REQUIRE(r.candidates.size() == 8);
    CHECK(r.priced);
    int evaluated = 0;
    for (const auto& c : r.candidates) {
        const auto& pool = c.plan.replica;
        if (pool.tp * pool.replicas > 8) {
            CHECK(c.status == plans::CandidateStatus::Pruned);
            CHECK_THAT(c.reason, Catch::Contains("needs 16 GPUs"));
        } else if (pool.tp == 1) {
            CHECK(c.status == plans::CandidateStatus::OutOfMemory);
            CHECK_THAT(c.reason, Catch::Contains("weights"));
        } else {
            REQUIRE(c.status == plans::CandidateStatus::Evaluated);  // 1 x tp 2 on H100 or H200
            ++evaluated;
            // 2 GPUs at 3 or 4 USD/h; 1,000 requests meeting the SLOs take 1000 / goodput seconds.
            const double usd_per_hour = 2 * (pool.accelerator.id == "h200-sxm-141gb" ? 4.0 : 3.0);
            CHECK(c.usd_per_hour == usd_per_hour);
            CHECK(c.usd_per_1k_good_requests == Approx(usd_per_hour / 3600 / c.goodput_requests_per_s * 1000));
            // At either device's 700 W TDP: 2 x 700 J/s over the output tokens of a second.
            CHECK(c.joules_per_output_token == Approx(2 * 700.0 / c.output_tokens_per_s));
        }
    }
    CHECK(evaluated == 2);
    // Ranking by cost needs a price for every device type tried.
    space.prices = {{"h100-sxm-80gb", 3.0}};
    try {
        plans::search_serving(s.model, s.cluster, *s.serving(), space, ctx, s.seed);
        FAIL("expected an InputError");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "search.objective");
    }
}

TEST_CASE("ranking serving plans by capacity bisects each plan's SLO-meeting rate", "[plans][search][serving]") {
    const auto& ctx = testing::source_context();
    plans::Scenario s = scenario("capacity: {seeds: 1, min_rate: 0.5}\n");
    plans::SearchSpace space;
    plans::set_search_key(space, "search.tp", std::vector<int64_t>{1, 2});
    plans::set_search_key(space, "search.replicas", std::vector<int64_t>{1, 2});
    space.objective = plans::Objective::Capacity;
    const auto r = plans::search_serving(s.model, s.cluster, *s.serving(), space, ctx, s.seed);
    REQUIRE(r.evaluated == 4);
    for (const auto& c : r.candidates) {
        // The same bisection `fathom capacity` runs on that plan.
        const auto cap = plans::find_capacity(s.model, s.cluster, c.plan, ctx, s.seed);
        CHECK(c.capacity_requests_per_s == cap.rate);
        CHECK(c.score == cap.rate / c.gpus);
    }
    for (size_t k = 1; k < r.ranking.size(); ++k)
        CHECK(r.candidates[static_cast<size_t>(r.ranking[k - 1])].score >=
              r.candidates[static_cast<size_t>(r.ranking[k])].score);
}

TEST_CASE("a serving scenario's search section takes serving axes and catalog device types",
          "[plans][search][serving]") {
    CHECK(scenario("search: {tp: [1, 2], replicas: [2], disaggregation: [off, on], prices: [h100-sxm-80gb=2.5]}\n")
              .search.has_value());
    CHECK_THAT(error_of("search: {zero_stage: [1]}\n"), Catch::Contains("serving-search.yaml:8") &&
                                                            Catch::Contains("key 'search.zero_stage'") &&
                                                            Catch::Contains("searches training plans"));
    CHECK_THAT(error_of("search: {accelerator: [h100-sxm-80gb, h900]}\n"),
               Catch::Contains("serving-search.yaml:8") && Catch::Contains("unknown accelerator 'h900'"));
    CHECK_THAT(error_of("search: {prices: [h100-sxm-80gb=cheap]}\n"), Catch::Contains("serving-search.yaml:8") &&
                                                                          Catch::Contains("key 'search.prices'") &&
                                                                          Catch::Contains("expected ID=USD"));
    CHECK_THAT(error_of("search: {disaggregation: [maybe]}\n"), Catch::Contains("got 'maybe'"));
    // And a training scenario refuses serving axes and the capacity objective.
    auto training_error = [](const std::string& set) {
        try {
            scenarios::load_scenario(testing::example("quickstart.yaml"), testing::source_catalog(), {set});
        } catch (const sim::InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(training_error("search.replicas=[2]"), Catch::Contains("searches serving plans"));
    CHECK_THAT(training_error("search.objective=capacity"), Catch::Contains("capacity ranks serving plans"));
}

TEST_CASE("a serving search split into two shares and merged is the search of one process",
          "[plans][search][serving]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = scenario();
    const auto whole = plans::search_serving(s.model, s.cluster, *s.serving(), small_space(), ctx, s.seed);
    plans::SearchOptions r0, r1;
    r0.partition = {0, 2};
    r1.partition = {1, 2};
    auto merged = plans::search_serving(s.model, s.cluster, *s.serving(), small_space(), ctx, s.seed, r0);
    const auto other = plans::search_serving(s.model, s.cluster, *s.serving(), small_space(), ctx, s.seed, r1);
    plans::merge_serving_search_share(merged, plans::encode_serving_search_share(other, r1.partition));
    plans::finalize_serving_search(merged, small_space());
    CHECK(merged.ranking == whole.ranking);
    for (size_t i = 0; i < whole.candidates.size(); ++i) {
        CHECK(merged.candidates[i].status == whole.candidates[i].status);
        CHECK(merged.candidates[i].ttft_p90_s == whole.candidates[i].ttft_p90_s);
        CHECK(merged.candidates[i].score == whole.candidates[i].score);
        CHECK(merged.candidates[i].pareto_latency == whole.candidates[i].pareto_latency);
    }
}
