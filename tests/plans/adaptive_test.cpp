// Adaptive training runs (plans/adaptive.h): the phase time against its closed form, the run's
// minimal examples against its definition, the dynamic programme against brute force over every
// sequence of plans, and the input checks.
#include "plans/adaptive.h"

#include "plans/search_keys.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace fathom;

namespace {

// Llama 3 8B on one DGX H100 with local NVMe drives; a small space over tp, micro-batch and the
// global batch.
plans::Scenario quickstart_with_ssd() {
    return scenarios::load_scenario(testing::example("quickstart.yaml"), testing::source_catalog(),
                                    {"cluster.ssd=nvme-gen5-14gbs", "parallel.cp=1"});
}

plans::SearchSpace space() {
    plans::SearchSpace s;
    plans::set_search_key(s, "search.tp", std::vector<int64_t>{1, 2});
    plans::set_search_key(s, "search.pp", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.vp", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.cp", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.micro_batch_size", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.global_batch_size", std::vector<int64_t>{32, 64, 128});
    plans::set_search_key(s, "search.zero_stage", std::vector<int64_t>{1});
    plans::set_search_key(s, "search.recompute", std::string("selective"));
    s.b_noise = 16;
    s.b_noise_final = 1024;
    s.target_tokens = 1e10;
    s.phases = 3;
    s.restart_s = 120;
    return s;
}

}  // namespace

TEST_CASE("an adaptive phase takes E_min x integral (1 + B / b(p)) dp sequences", "[plans][adaptive]") {
    // Constant noise scale b = 100: the integral over [0.2, 0.5] is 0.3 (1 + B / 100); at B = 300,
    // 1.2; 1e6 minimal sequences of 4,096 tokens at 1e7 tokens/s: 1.2e6 x 4096 / 1e7 s.
    CHECK(plans::adaptive_phase_seconds(1e6, 4096, 300, 1e7, 100, 100, 0.2, 0.5) == Approx(1.2e6 * 4096 / 1e7));
    // Growing b = 100 x 16^p: integral of 300 / (100 x 16^p) over [0, 1] = 3 (1 - 1/16) / ln 16.
    const double noise = 3.0 * (1.0 - 1.0 / 16) / std::log(16.0);
    CHECK(plans::adaptive_phase_seconds(1e6, 4096, 300, 1e7, 100, 1600, 0, 1) ==
          Approx(1e6 * (1 + noise) * 4096 / 1e7));
}

TEST_CASE("the adaptive run is the cheapest sequence of plans, restarts included", "[plans][adaptive]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart_with_ssd();
    const auto& base = *s.training();
    const plans::SearchSpace sp = space();
    const auto r = plans::search_training(s.model, s.cluster, base, sp, ctx);
    REQUIRE(r.evaluated >= 4);
    const auto run = plans::plan_adaptive_run(r, sp, s.model, s.cluster, base.training.seq_len);
    REQUIRE(run.phases.size() == 3);
    // E_min: the scenario's batch (128) over the whole run trains exactly target_tokens.
    const double at_b0 = run.min_sequences * (1 + 128.0 / 16 * (1 - 16.0 / 1024) / std::log(1024.0 / 16));
    CHECK(at_b0 * 8192 == Approx(1e10));
    // One restart: 8.0B x 14 B saved at 6.75 GB/s and read at 14 GB/s on one node, plus 120 s.
    CHECK(run.checkpoint_bytes == Approx(s.model.total_params(8192) * 14));
    CHECK(run.reconfigure_one_s == Approx(run.checkpoint_bytes / 6.75e9 + run.checkpoint_bytes / 14e9 + 120));
    // Brute force over every sequence of three evaluated plans.
    std::vector<size_t> ev;
    for (int64_t i : r.ranking) ev.push_back(static_cast<size_t>(i));
    auto layout = [&](size_t i) {
        auto p = r.candidates[i].plan;
        p.training.global_batch = 0;
        return p.describe();
    };
    auto phase = [&](size_t i, int k) {
        const auto& c = r.candidates[i];
        return plans::adaptive_phase_seconds(run.min_sequences, 8192, c.plan.training.global_batch, c.tokens_per_s, 16,
                                             1024, k / 3.0, (k + 1) / 3.0);
    };
    double best = 1e300;
    for (size_t a : ev)
        for (size_t b : ev)
            for (size_t c : ev) {
                double t = phase(a, 0) + phase(b, 1) + phase(c, 2);
                if (layout(a) != layout(b)) t += run.reconfigure_one_s;
                if (layout(b) != layout(c)) t += run.reconfigure_one_s;
                best = std::min(best, t);
            }
    CHECK(run.seconds == Approx(best).epsilon(1e-12));
    double sum = run.reconfigure_s;
    for (const auto& ph : run.phases) sum += ph.seconds;
    CHECK(run.seconds == Approx(sum).epsilon(1e-12));
    CHECK(run.seconds <= run.best_fixed_s * (1 + 1e-12));
    // The growing noise scale moves the run to larger batches, never back.
    for (size_t k = 1; k < run.phases.size(); ++k)
        CHECK(r.candidates[static_cast<size_t>(run.phases[k].candidate)].plan.training.global_batch >=
              r.candidates[static_cast<size_t>(run.phases[k - 1].candidate)].plan.training.global_batch);
}

TEST_CASE("under a constant noise scale the adaptive run is the best fixed plan", "[plans][adaptive]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart_with_ssd();
    plans::SearchSpace sp = space();
    sp.b_noise_final = 0;  // b_noise throughout
    const auto r = plans::search_training(s.model, s.cluster, *s.training(), sp, ctx);
    const auto run = plans::plan_adaptive_run(r, sp, s.model, s.cluster, 8192);
    CHECK(run.switches == 0);
    CHECK(run.seconds == Approx(run.best_fixed_s).epsilon(1e-12));
    for (const auto& ph : run.phases) CHECK(ph.candidate == run.best_fixed);
}

TEST_CASE("an adaptive run names what it lacks", "[plans][adaptive]") {
    const auto& ctx = testing::source_context();
    const plans::Scenario s = quickstart_with_ssd();
    const auto r = plans::search_training(s.model, s.cluster, *s.training(), space(), ctx);
    auto key_of = [&](const plans::SearchSpace& sp, const hardware::ClusterSpec& c) {
        try {
            plans::plan_adaptive_run(r, sp, s.model, c, 8192);
        } catch (const sim::InputError& e) {
            return e.key();
        }
        return std::string();
    };
    plans::SearchSpace no_target = space();
    no_target.target_tokens = 0;
    CHECK(key_of(no_target, s.cluster) == "search.target_tokens");
    plans::SearchSpace no_noise = space();
    no_noise.b_noise = 0;
    CHECK(key_of(no_noise, s.cluster) == "search.b_noise");
    hardware::ClusterSpec no_ssd = s.cluster;
    no_ssd.ssd.reset();
    CHECK(key_of(space(), no_ssd) == "cluster.ssd");
}
