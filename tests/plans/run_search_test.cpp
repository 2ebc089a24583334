// Whole runs in a plan search (plans/run_search.h): every plan that fits crossed with the run
// settings listed, each run the one `fathom run` simulates for that plan and those settings, ranked
// by median time to target, the same at any thread count; pairs that cannot run kept with their
// reason; settings no run can take refused naming their search key.
#include "plans/run_search.h"

#include "plans/run_steps.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;

namespace {

// Llama 3 8B on 4 DGX H100 nodes at 100x Llama 3's failure rates; two layouts (cp 1 or 2 with
// tp 2) and the search section's run settings after `search`.
std::string scenario(const std::string& search, const std::string& run_extra = "  repair: 12 h\n  spare_nodes: 0\n") {
    return "name: run-search-test\nmodel: llama3-8b\ncluster:\n  accelerator: h100-sxm-80gb\n  nodes: 4\n"
           "  gpus_per_node: 8\n  ssd: nvme-gen5-14gbs\n  storage: superpod-h100-best\nparallel:\n  tp: 2\n  cp: 2\n"
           "training:\n  seq_len: 8192\n  global_batch_size: 128\n  micro_batch_size: 1\n  zero_stage: 1\n"
           "run:\n  target_steps: 50000\n  failures: llama3-h100\n  failure_scale: 100\n  detect: 5 min\n"
           "  restart: 10 min\n  seeds: 10\n" +
           run_extra +
           "search:\n  tp: [2]\n  cp: [1, 2]\n  pp: [1]\n  vp: [1]\n  micro_batch_size: [1]\n  zero_stage: [1]\n"
           "  recompute: [none]\n" +
           search;
}

plans::Scenario load(const std::string& yaml) {
    return scenarios::load_scenario_text(yaml, "run-search-test.yaml", testing::source_catalog());
}

plans::RunSearchResult runs_of(const plans::Scenario& s, int threads = 1) {
    plans::SearchOptions opt;
    opt.threads = threads;
    const plans::SearchResult plans =
        plans::search_training(s.model, s.cluster, *s.training(), *s.search, testing::source_context(), opt);
    return plans::search_runs(s, *s.search, plans, testing::source_context(), opt);
}

}  // namespace

TEST_CASE("a run search crosses the plans that fit with the run settings, each run as fathom run gives it",
          "[plans][run][search]") {
    const plans::Scenario s = load(
        scenario("  checkpoint_interval: [10 min, 1 h]\n  checkpoint_method: [sync, async]\n  spare_nodes: [0, 2]\n"
                 "  recovery: [restart, elastic]\n",
                 "  repair: 12 h\n  spare_nodes: 0\n  reconfigure: 10 s\n"));
    const plans::SearchResult plans =
        plans::search_training(s.model, s.cluster, *s.training(), *s.search, testing::source_context());
    REQUIRE(plans.evaluated == 2);
    const plans::RunSearchResult r = plans::search_runs(s, *s.search, plans, testing::source_context());
    // 2 plans x (2 intervals x 2 methods x 2 pools x 2 recoveries): plans slowest, then the settings
    // in the order of the keys, each in its list's order.
    CHECK(r.plans == 2);
    CHECK(r.settings == 16);
    REQUIRE(r.candidates.size() == 32);
    CHECK(r.simulated == 32);
    const plans::RunCandidate& c = r.candidates[16 + 8 + 4 + 2 + 1];  // plan 2, 1 h, async, 2 spares, elastic
    std::vector<int64_t> fitting;
    for (const plans::Candidate& p : plans.candidates)
        if (p.status == plans::CandidateStatus::Evaluated) fitting.push_back(p.index);
    CHECK(c.plan == fitting[1]);
    CHECK(c.request.checkpoint_interval_s == 3600);
    CHECK(c.request.method == plans::CheckpointMethod::Async);
    CHECK(c.request.spare_nodes == 2);
    CHECK(c.request.recovery == plans::Recovery::Elastic);
    // Each pair is the run of that plan with those settings (its step from the search).
    for (size_t i : {size_t{0}, size_t{5}, size_t{31}}) {
        const plans::RunCandidate& x = r.candidates[i];
        plans::Scenario one = s;
        one.plan = plans.candidates[static_cast<size_t>(x.plan)].plan;
        one.run = x.request;
        const plans::RunSteps steps = plans::run_steps(one, testing::source_context(), true, true);
        const plans::RunSummary y = plans::simulate_runs(plans::plan_run(
            one, plans.candidates[static_cast<size_t>(x.plan)].step_time_s, testing::source_catalog(), steps));
        CHECK(x.summary.wall_p50_s == y.wall_p50_s);
        CHECK(x.summary.ettr_mean == y.ettr_mean);
    }
    // Ranked fastest to target first; the same runs and ranking on two threads.
    for (size_t k = 1; k < r.ranking.size(); ++k)
        CHECK(r.candidates[static_cast<size_t>(r.ranking[k - 1])].summary.wall_p50_s <=
              r.candidates[static_cast<size_t>(r.ranking[k])].summary.wall_p50_s);
    const plans::RunSearchResult two = runs_of(s, 2);
    CHECK(two.ranking == r.ranking);
    for (size_t i = 0; i < r.candidates.size(); ++i)
        CHECK(two.candidates[i].summary.wall_mean_s == r.candidates[i].summary.wall_mean_s);
    // The records carry the settings and the percentiles.
    const std::vector<plans::Record> rows = plans::run_search_records(r, plans);
    REQUIRE(rows.size() == 32);
    CHECK(std::get<std::string>(*rows[31].find("recovery")) == "elastic");
    CHECK(std::get<double>(*rows[31].find("time_to_target_s.p50")) == r.candidates[31].summary.wall_p50_s);
}

TEST_CASE("a run search keeps the pairs that cannot run with their reason, unranked", "[plans][run][search]") {
    // A 1-second interval is shorter than one checkpoint's write.
    const plans::RunSearchResult r = runs_of(load(scenario("  checkpoint_interval: [1 s, 1 h]\n")));
    REQUIRE(r.candidates.size() == 4);
    CHECK(r.refused == 2);
    CHECK(r.ranking.size() == 2);
    CHECK(!r.candidates[0].ok);
    CHECK(r.candidates[0].reason.rfind("run.checkpoint_interval: ", 0) == 0);
    CHECK(r.candidates[1].ok);
}

TEST_CASE("run settings no run can take are refused naming their search key", "[plans][run][search][bad-input]") {
    auto refused = [](const std::string& yaml, bool at_load) -> sim::InputError {
        try {
            const plans::Scenario s = load(yaml);
            if (!at_load) runs_of(s);
        } catch (const sim::InputError& e) {
            return e;
        }
        FAIL("accepted");
        throw;
    };
    // Spare pools without a repair time; elastic recovery without its pause.
    const std::string bare = "  spare_nodes: 0\n  repair: 12 h\n";
    std::string no_repair = scenario("  spare_nodes: [0, 2]\n", "");
    CHECK(refused(no_repair, false).key() == "search.spare_nodes");
    CHECK(refused(scenario("  recovery: [restart, elastic]\n", bare), false).key() == "search.recovery");
    // Intervals need their unit, and must be positive.
    const sim::InputError unit = refused(scenario("  checkpoint_interval: [10]\n"), true);
    CHECK(unit.key() == "search.checkpoint_interval");
    CHECK(unit.line() > 0);
    CHECK(refused(scenario("  checkpoint_interval: [0 s]\n"), true).key() == "search.checkpoint_interval");
    // The run settings without a run section are warned about: they cannot change the result.
    std::string no_run = scenario("  checkpoint_method: [sync]\n", "");
    no_run.erase(no_run.find("run:\n"), no_run.find("search:\n") - no_run.find("run:\n"));
    const plans::Scenario warned = load(no_run);
    bool found = false;
    for (const auto& w : warned.warnings) found = found || w.key == "search";
    CHECK(found);
}
