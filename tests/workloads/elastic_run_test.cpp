// Elastic recovery in whole runs (workloads/run/training_run.h, Elastic): a failure drops the failed
// node's replicas and the job goes on slower until they rejoin. Each drop's cost against its closed
// form, the fall back to a restart, and the run's accounting and timeline.
#include "workloads/run/training_run.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fathom::workloads::run;

namespace {

// 200 hours of 10-second steps; node failures at 0.05 an hour (one every 20 h); hourly
// synchronous checkpoints of 60 s; 2 min to detect, 10 min to restart a node's processes, 5 min to
// copy its state from a peer, 30 s to reconfigure; one node out makes steps 1.25x as long, two
// 1.5x.
RunSpec elastic_run() {
    RunSpec s;
    s.step_s = 10.0;
    s.target_steps = 72'000;
    s.failures = {{"gpu", 0.05, true}};
    s.checkpoint = {3600, 60, 60, 300};
    s.detect_s = 120;
    s.restart_s = 600;
    s.elastic.enabled = true;
    s.elastic.reconfigure_s = 30;
    s.elastic.copy_s = 300;
    s.elastic.slowdown = [](int out) { return 1.0 + 0.25 * out; };
    return s;
}

double accounted(const RunReport& r) {
    return r.productive_s + r.lost_work_s + r.detect_s + r.node_wait_s + r.restart_s + r.load_s + r.checkpoint_stall_s +
           r.straggler_s + r.reconfigure_s + r.degraded_s + r.drain_s;
}

struct Means {
    double lost = 0, degraded = 0, reconfigure = 0, drops = 0, restarts = 0, restart_s = 0;
};
Means per_drop(const RunSpec& s, int seeds) {
    Means m;
    for (int seed = 1; seed <= seeds; ++seed) {
        const RunReport r = simulate_run(s, static_cast<uint64_t>(seed));
        m.lost += r.lost_work_s;
        m.degraded += r.degraded_s;
        m.reconfigure += r.reconfigure_s;
        m.drops += static_cast<double>(r.drops);
        m.restarts += static_cast<double>(r.restarts());
        m.restart_s += r.restart_s;
    }
    m.lost /= m.drops;
    m.degraded /= m.drops;
    m.reconfigure /= m.drops;
    return m;
}

}  // namespace

TEST_CASE("an elastic drop costs half a step, two pauses and a node's time out at the slower step", "[run]") {
    const RunSpec s = elastic_run();
    REQUIRE(s.check().empty());
    // Per drop: the step in progress, lost at a uniform phase: step / 2 = 5 s; a reconfiguration as
    // the replicas leave and one as they rejoin: 60 s; and the node's time out after the pause
    // (restart 600 + copy 300 = 900 s) at 1.25x the step: 900 x (1 - 1/1.25) = 180 s of wall clock.
    // A second failure within those 900 s (e^-(0.05 x 0.25) ~ 1.2% of drops) makes it 1.5x for a
    // while: the mean is 180 s to within 2%. Nothing restarts the job.
    const Means m = per_drop(s, 200);
    CHECK(m.drops > 1500);  // 200 seeds x about 10 failures in ~200 h
    CHECK(m.restarts == 0);
    CHECK(m.restart_s == 0);
    CHECK(m.lost == Approx(5.0).epsilon(0.05));
    CHECK(m.reconfigure == Approx(60.0).epsilon(0.005));  // a drop near the end may not rejoin before it
    CHECK(m.degraded == Approx(180.0).epsilon(0.02));
}

TEST_CASE("elastic: a rejoin waits for a node out of repair when no spare is healthy", "[run]") {
    RunSpec s = elastic_run();
    s.pool = {0, 36'000};  // no spares, 10 hours of repair
    s.elastic.slowdown = [](int) { return 1.25; };
    // A node's replicas are out from the pause until it is back (its repair, less the detection
    // the wait overlaps: 36,000 - 120 s), restarted and copied (900 s): D = 36,780 s, at 1.25x:
    // 0.2 D of wall clock lost. Windows of length D at Poisson times of rate lambda overlap: each
    // adds min(D, gap to the next) to their union, on average (1 - e^(-lambda D)) / lambda; at
    // lambda D = 0.05 / 3600 x 36,780 = 0.511 that is 0.783 D. Per drop: 0.2 x 0.783 D = 5,760 s,
    // to within 5% (the pauses are not failure-exposed time). No restart: the job never waits.
    const Means m = per_drop(s, 100);
    const double d = 36'000 - 120 + 900, lambda_d = 0.05 / 3600 * d;
    CHECK(m.restarts == 0);
    CHECK(m.degraded == Approx(0.2 * d * -std::expm1(-lambda_d) / lambda_d).epsilon(0.05));
}

TEST_CASE("elastic: a failure leaving a layout that cannot run restarts the job from its checkpoint", "[run]") {
    RunSpec s = elastic_run();
    s.failures = {{"gpu", 1.0, true}};  // one an hour, each node out 15 min: overlaps in ~22% of drops
    s.elastic.slowdown = [](int out) { return out <= 1 ? 1.25 : 0.0; };
    int64_t drops = 0, restarts = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        const RunReport r = simulate_run(s, seed);
        CHECK(r.wall_s == Approx(accounted(r)).epsilon(1e-12));
        // Only a restart costs the restart and the checkpoint's load: drops are reconfigured.
        CHECK(r.restart_s == Approx(600.0 * static_cast<double>(r.restarts())).epsilon(1e-12));
        if (r.restarts() == 0) CHECK(r.load_s == 0);
        CHECK(r.reconfigure_s >= 30.0 * static_cast<double>(r.drops));
        drops += r.drops;
        restarts += r.restarts();
    }
    // A failure while one node is out (about 1 - e^(-1 x 0.25) = 22% of them) restarts.
    const double share = static_cast<double>(restarts) / static_cast<double>(drops + restarts);
    CHECK(share == Approx(1 - std::exp(-0.25)).margin(0.06));
}

TEST_CASE("elastic runs account for every second, pass cycles as events do, and repeat per seed", "[run]") {
    RunSpec s = elastic_run();
    s.failures = {{"gpu", 0.3, true}, {"software", 0.2, false}};
    s.stragglers = {0.1, 2.0, 1800};
    s.pool = {1, 7200};
    RunSpec each = s;
    each.batch_cycles = false;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
        std::vector<RunEvent> log;
        const RunReport r = simulate_run(s, seed, &log);
        CHECK(r.wall_s == Approx(accounted(r)).epsilon(1e-12));
        CHECK(r.drops > 0);
        // The timeline's spans tile the wall clock.
        double spans = 0;
        for (const RunEvent& e : log)
            if (e.kind != RunEvent::Kind::Failure && e.kind != RunEvent::Kind::Eviction &&
                e.kind != RunEvent::Kind::Rejoin)
                spans += e.duration_s;
        CHECK(spans == Approx(r.wall_s).epsilon(1e-12));
        const RunReport e = simulate_run(each, seed);
        CHECK(e.wall_s == Approx(r.wall_s).epsilon(1e-9));
        CHECK(e.drops == r.drops);
        const RunReport again = simulate_run(s, seed);
        CHECK(again.wall_s == r.wall_s);
        CHECK(again.degraded_s == r.degraded_s);
    }
    RunSpec bad = s;
    bad.elastic.slowdown = nullptr;
    CHECK(bad.check().rfind("elastic", 0) == 0);
    bad = s;
    bad.elastic.reconfigure_s = -1;
    CHECK(bad.check().rfind("elastic", 0) == 0);
}
