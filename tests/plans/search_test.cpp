// Training plan search (plans/search.h): the best plan equals brute-force evaluation of every plan
// of the space, results are identical at any thread count, pruned plans say why, and the
// statistical efficiency follows its closed form.
#include "plans/search.h"

#include "plans/search_keys.h"
#include "tests/support/fixtures.h"
#include "tests/support/search_fixture.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/training_memory.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fathom;
using testing::quickstart;
using testing::small_space;

TEST_CASE("statistical efficiency: (B_noise + B0) / (B_noise + B), 1 without a noise scale", "[plans][search]") {
    // b_noise 1024, B0 256: B = 256 -> 1; B = 512 -> 1280 / 1536 = 0.8333; B = 128 -> 1280 / 1152.
    CHECK(plans::statistical_efficiency(1024, 256, 256) == Approx(1.0));
    CHECK(plans::statistical_efficiency(1024, 256, 512) == Approx(1280.0 / 1536.0));
    CHECK(plans::statistical_efficiency(1024, 256, 128) == Approx(1280.0 / 1152.0));
    CHECK(plans::statistical_efficiency(0, 256, 4096) == 1.0);
}

TEST_CASE("the enumeration is the cross product of the axes that factor the GPU count", "[plans][search]") {
    const plans::Scenario s = quickstart();
    const auto plans = plans::enumerate_training_plans(s.model, s.cluster, *s.training(), small_space());
    // tp x pp must divide 8 GPUs with cp 1: 7 of the 4 x 2 pairs do (tp 8 pp 2 needs 16; dp =
    // 8 / (tp pp)), times micro-batch 2 x ZeRO 2 x recompute 2 = 56, less the ZeRO duplicates where
    // dp = 1 (tp 8 pp 1 and tp 4 pp 2: 2 x 2 x 2 = 8 plans stand for 16) -> 48.
    CHECK(plans.size() == 48);
    for (const auto& p : plans) {
        CHECK(p.layout.dp * p.layout.tp * p.layout.pp * p.layout.cp == 8);
        CHECK(p.layout.sequence_parallel == (p.layout.tp > 1));  // the quickstart's preset turns it on
        CHECK(p.training.schedule == "1f1b");
    }
}

TEST_CASE("the search's best plan is the best of brute-force evaluation, and pruned plans say why", "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    const plans::SearchSpace space = small_space();
    const plans::SearchResult r = plans::search_training(s.model, s.cluster, *s.training(), space, ctx);
    REQUIRE(r.candidates.size() == 48);
    REQUIRE(r.evaluated > 0);
    // Brute force: every plan of the space evaluated on its own.
    double best = 0;
    int64_t best_index = -1, fits = 0;
    const auto plans = plans::enumerate_training_plans(s.model, s.cluster, *s.training(), space);
    for (size_t i = 0; i < plans.size(); ++i) {
        const plans::Outcome o = plans::evaluate_training(s.model, s.cluster, plans[i], ctx);
        if (!o.ok() || o.training()->out_of_memory) continue;
        ++fits;
        const double tps = o.training()->tokens_per_s_per_gpu * 8;
        if (tps > best) best = tps, best_index = static_cast<int64_t>(i);
    }
    CHECK(r.evaluated == fits);
    REQUIRE(best_index >= 0);
    CHECK(r.ranking.front() == best_index);
    CHECK(r.candidates[static_cast<size_t>(best_index)].tokens_per_s == Approx(best).epsilon(1e-12));
    // Every candidate not simulated has its reason; out-of-memory ones their estimated peak.
    for (const auto& c : r.candidates) {
        if (c.status == plans::CandidateStatus::Evaluated) continue;
        CHECK_FALSE(c.reason.empty());
        if (c.status == plans::CandidateStatus::OutOfMemory) CHECK(c.peak_memory_bytes > c.capacity_bytes);
    }
    CHECK(r.evaluated + r.pruned + r.out_of_memory + r.skipped == 48);
}

TEST_CASE("a search gives identical results at one and at two threads", "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    plans::SearchOptions one, two;
    one.threads = 1;
    two.threads = 2;
    const auto a = plans::search_training(s.model, s.cluster, *s.training(), small_space(), ctx, one);
    const auto b = plans::search_training(s.model, s.cluster, *s.training(), small_space(), ctx, two);
    REQUIRE(a.candidates.size() == b.candidates.size());
    CHECK(a.ranking == b.ranking);
    for (size_t i = 0; i < a.candidates.size(); ++i) {
        CHECK(a.candidates[i].status == b.candidates[i].status);
        CHECK(a.candidates[i].step_time_s == b.candidates[i].step_time_s);  // bit-identical
        CHECK(a.candidates[i].pareto_memory == b.candidates[i].pareto_memory);
    }
}

TEST_CASE("goodput ranks by throughput times statistical efficiency, the Pareto front is undominated",
          "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    plans::SearchSpace space = small_space();
    plans::set_search_key(space, "search.global_batch_size", std::vector<int64_t>{64, 128, 256});
    space.b_noise = 128;  // B0 = 128 (the quickstart's): efficiencies 256/192, 1, 256/384
    space.price_per_gpu_hour = 2;
    const auto r = plans::search_training(s.model, s.cluster, *s.training(), space, ctx);
    for (size_t k = 1; k < r.ranking.size(); ++k)
        CHECK(r.candidates[static_cast<size_t>(r.ranking[k - 1])].goodput_tokens_per_s >=
              r.candidates[static_cast<size_t>(r.ranking[k])].goodput_tokens_per_s);
    for (const auto& c : r.candidates) {
        if (c.status != plans::CandidateStatus::Evaluated) continue;
        const double e = c.plan.training.global_batch == 64    ? 256.0 / 192
                         : c.plan.training.global_batch == 128 ? 1.0
                                                               : 256.0 / 384;
        CHECK(c.statistical_efficiency == Approx(e));
        // 2 USD per GPU-hour x 8 GPUs over the tokens of an hour, per million.
        CHECK(c.usd_per_million_tokens == Approx(2.0 * 8 / 3600 / c.tokens_per_s * 1e6));
        bool dominated = false;
        for (const auto& d : r.candidates)
            if (d.status == plans::CandidateStatus::Evaluated && d.tokens_per_s >= c.tokens_per_s &&
                d.peak_memory_bytes <= c.peak_memory_bytes &&
                (d.tokens_per_s > c.tokens_per_s || d.peak_memory_bytes < c.peak_memory_bytes))
                dominated = true;
        CHECK(c.pareto_memory == !dominated);
    }
}

TEST_CASE("ranking by cost without a price is an input error naming the key", "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    plans::SearchSpace space = small_space();
    space.objective = plans::Objective::Cost;
    try {
        plans::search_training(s.model, s.cluster, *s.training(), space, ctx);
        FAIL("expected an InputError");
    } catch (const sim::InputError& e) {
        CHECK(e.key() == "search.objective");
    }
}

TEST_CASE("max_candidates keeps the first of the enumeration order", "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    plans::SearchOptions opt;
    opt.max_candidates = 10;
    const auto r = plans::search_training(s.model, s.cluster, *s.training(), small_space(), ctx, opt);
    CHECK(r.truncated);
    CHECK(r.truncation == "cut by --max-candidates");
    CHECK(r.candidates.size() == 10);
}

TEST_CASE("a search's enumeration is bounded: combinations, candidates and the time limit", "[plans][search]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    // The small space's 64 combinations x n global batch sizes (1, 2, ..., n).
    auto space_with = [](int64_t n) {
        plans::SearchSpace space = small_space();
        std::vector<int64_t> gb(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) gb[static_cast<size_t>(i)] = i + 1;
        plans::set_search_key(space, "search.global_batch_size", gb);
        return space;
    };
    auto error_of = [&](const plans::SearchSpace& space, const plans::SearchOptions& opt) -> std::string {
        try {
            plans::search_training(s.model, s.cluster, *s.training(), space, ctx, opt);
        } catch (const sim::InputError& e) {
            CHECK(e.key() == "search");
            return e.what();
        }
        return "no error";
    };
    // 64 x 200,000 = 12.8M combinations: refused before anything is enumerated, naming the axes.
    CHECK_THAT(error_of(space_with(200'000), {}),
               Catch::Contains("more than 10000000 combinations (4 tp x 2 pp x 2 micro_batch_size x 200000 "
                               "global_batch_size x 2 zero_stage x 2 recompute values)") &&
                   Catch::Contains("--time-limit"));
    // 64 x 4,200 = 268,800 combinations, 48 of every 64 candidates (see the enumeration test):
    // 201,600 candidates, past the 200,000 a search holds.
    CHECK_THAT(error_of(space_with(4'200), {}), Catch::Contains("more than 200000 candidates after pruning"));
    // A time limit bounds the same 12.8M: the enumeration stops at its deadline (checked every
    // 4096 combinations; this one passed before the first check), nothing is evaluated, and the
    // result says why it is short.
    plans::SearchOptions opt;
    opt.time_limit_s = 1e-9;
    const auto r = plans::search_training(s.model, s.cluster, *s.training(), space_with(200'000), ctx, opt);
    CHECK(r.truncated);
    CHECK(r.truncation == "cut by --time-limit during enumeration");
    CHECK(r.candidates.size() < 4096);
    CHECK(r.evaluated == 0);
    CHECK(r.skipped == static_cast<int64_t>(r.candidates.size()));
}

TEST_CASE("a choice list rejects unknown and empty entries", "[plans][search]") {
    const plans::KeyInfo* k = plans::find_key("search.recompute");
    REQUIRE(k != nullptr);
    CHECK(plans::check_value(*k, std::string("none,full")).empty());
    CHECK_THAT(plans::check_value(*k, std::string("none,,full")), Catch::Contains("got ''"));
    CHECK_THAT(plans::check_value(*k, std::string("none,partial")), Catch::Contains("got 'partial'"));
    CHECK_THAT(plans::check_value(*k, std::string("")), Catch::Contains("at least one entry"));
}

TEST_CASE("a search split into two shares and merged is the search of one process", "[plans][search]") {
    // What `mpirun -np 2 fathom search` does (and the Python workers will): each process evaluates
    // the candidates i with i mod 2 == rank, rank 0 merges the other's share and ranks.
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart();
    const auto whole = plans::search_training(s.model, s.cluster, *s.training(), small_space(), ctx);
    plans::SearchOptions r0, r1;
    r0.partition = {0, 2};
    r1.partition = {1, 2};
    auto merged = plans::search_training(s.model, s.cluster, *s.training(), small_space(), ctx, r0);
    const auto other = plans::search_training(s.model, s.cluster, *s.training(), small_space(), ctx, r1);
    CHECK(merged.skipped == 24);  // the other half, before the merge
    plans::merge_search_share(merged, plans::encode_search_share(other, r1.partition));
    plans::finalize_training_search(merged, small_space());
    CHECK(merged.ranking == whole.ranking);
    CHECK(merged.skipped == 0);
    for (size_t i = 0; i < whole.candidates.size(); ++i) {
        CHECK(merged.candidates[i].status == whole.candidates[i].status);
        CHECK(merged.candidates[i].reason == whole.candidates[i].reason);
        CHECK(merged.candidates[i].step_time_s == whole.candidates[i].step_time_s);  // bit-identical through the text
        CHECK(merged.candidates[i].pareto_memory == whole.candidates[i].pareto_memory);
    }
    // A share of another search does not merge silently.
    CHECK_THROWS_WITH(plans::merge_search_share(merged, "999 0 0: "), Catch::Contains("candidate 999 of 48"));
    CHECK_THROWS_WITH(plans::merge_search_share(merged, "1 0 5:ab "), Catch::Contains("malformed search share"));
}

TEST_CASE("memory pruning is exact: a sample of the plans pruned as out of memory do not fit when simulated",
          "[plans][search]") {
    // Llama 3.1 70B on 1,024 H100 over the default space with bf16 and fp8 (the search benchmark's
    // space): the search prunes a plan from the memory estimate alone. Every 8th pruned plan is
    // simulated in full; each must come out out of memory (its peak above capacity).
    const auto& ctx = testing::source_context();
    const auto& catalog = testing::source_catalog();
    plans::ClusterRequest req;
    req.accelerator = "h100-sxm-80gb";
    req.nodes = 128;
    req.nic = "ib-ndr-400g";
    const auto cluster = plans::build_cluster(req, catalog);
    const auto& model = catalog.model("llama3-70b");
    workloads::TrainingPlan base;
    base.layout.tp = 8;
    base.layout.pp = 4;
    base.layout.dp = 32;
    base.layout.sequence_parallel = true;
    base.training.micro_batch = 1;
    base.training.global_batch = 1024;
    base.training.seq_len = 8192;
    base.training.zero_stage = 1;
    base.training.schedule = workloads::default_schedule(base.layout);
    plans::SearchSpace space;
    space.set_axis("search.dtype", {std::string("bf16"), std::string("fp8")});
    const plans::SearchResult r = plans::search_training(model, cluster, base, space, ctx);
    int64_t pruned = 0, checked = 0;
    for (const auto& c : r.candidates) {
        if (c.status != plans::CandidateStatus::OutOfMemory || pruned++ % 8 != 0) continue;
        const plans::Outcome o = plans::evaluate_training(model, cluster, c.plan, ctx);
        REQUIRE(o.ok());
        INFO(c.reason);
        CHECK(o.training()->out_of_memory);
        ++checked;
    }
    CHECK(r.out_of_memory == pruned);
    CHECK(checked >= 20);  // the space prunes hundreds by memory
}
