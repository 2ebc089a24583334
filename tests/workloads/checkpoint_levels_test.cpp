// Checkpoint levels and drains in whole runs (workloads/run/training_run.h, CheckpointPolicy): on
// the nodes' own SSDs a checkpoint is lost with a node, so a node's failure goes back to the last
// persisted one (or the start) while a software failure reads the local one; an asynchronous drain
// over the NICs slows the steps it overlaps. Checked against runs that differ only in their
// interval, and against closed forms.
#include "workloads/run/training_run.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fathom::workloads::run;

namespace {

// 100 hours of 1-second steps, checkpoints every 15 min with no stall (so that checkpoints cost
// nothing and runs differing only in which survive compare draw for draw), 2 min to detect, 10 to
// restart, 5 to load from either level.
RunSpec levels(double node_rate, double software_rate) {
    RunSpec s;
    s.step_s = 1.0;
    s.target_steps = 360'000;
    s.failures = {{"gpu", node_rate, true}, {"software", software_rate, false}};
    s.checkpoint = {900, 0, 0, 300};
    s.checkpoint.persist_load_s = 300;
    s.detect_s = 120;
    s.restart_s = 600;
    return s;
}

}  // namespace

TEST_CASE("a node's loss on local SSDs goes back to the last persisted checkpoint", "[run]") {
    // Node failures only: every 4th of the 15-min checkpoints persisted is, for a node's loss, the
    // run that checkpoints every hour to a tier that survives it: the same draws, the same run.
    RunSpec local = levels(0.5, 0);
    local.checkpoint.node_local = true;
    local.checkpoint.persist_every = 4;
    RunSpec hourly = levels(0.5, 0);
    hourly.checkpoint.interval_s = 3600;
    RunSpec reference = local;
    reference.batch_cycles = false;
    REQUIRE(local.check().empty());
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        const RunReport a = simulate_run(local, seed), b = simulate_run(hourly, seed);
        const RunReport e = simulate_run(reference, seed);
        CHECK(a.interruptions == b.interruptions);
        CHECK(a.wall_s == Approx(b.wall_s).epsilon(1e-9));
        CHECK(a.lost_work_s == Approx(b.lost_work_s).epsilon(1e-9));
        CHECK(a.local_losses > 0);
        // Passing whole cycles at once keeps the persisted marks.
        CHECK(e.wall_s == Approx(a.wall_s).epsilon(1e-9));
        CHECK(e.lost_work_s == Approx(a.lost_work_s).epsilon(1e-9));
    }
}

TEST_CASE("a software failure reads the local checkpoint, and a tier with copies survives a node's loss", "[run]") {
    // Software failures only: the local copies stand, the run is the one without levels.
    RunSpec soft = levels(0, 0.5);
    soft.checkpoint.node_local = true;
    soft.checkpoint.persist_every = 4;
    const RunSpec plain = levels(0, 0.5);
    // Node failures on a tier that keeps copies (node_local false): persisting changes nothing.
    RunSpec copies = levels(0.5, 0);
    copies.checkpoint.persist_every = 4;
    const RunSpec plain_nodes = levels(0.5, 0);
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        const RunReport a = simulate_run(soft, seed), b = simulate_run(plain, seed);
        CHECK(a.wall_s == Approx(b.wall_s).epsilon(1e-9));
        CHECK(a.local_losses == 0);
        const RunReport c = simulate_run(copies, seed), d = simulate_run(plain_nodes, seed);
        CHECK(c.wall_s == Approx(d.wall_s).epsilon(1e-9));
    }
}

TEST_CASE("local checkpoints and nothing persisted: a node's loss restarts the run from its start", "[run]") {
    // 20 hours of steps, node failures at 0.05 an hour: each one goes back to the start, so the run
    // is one segment of T = 72,000 s restarted from its beginning, no load: the closed form
    // (1/lambda + r)(e^(lambda T) - 1) with r = 720 s: (72,000 + 720)(e^1 - 1) = 124,951 s.
    RunSpec s = levels(0.05, 0);
    s.target_steps = 72'000;
    s.checkpoint.node_local = true;
    double sum = 0;
    const int seeds = 4000;
    for (int seed = 1; seed <= seeds; ++seed) {
        const RunReport r = simulate_run(s, static_cast<uint64_t>(seed));
        CHECK(r.load_s == 0);
        sum += r.wall_s;
    }
    const double expected = expected_segment_s(72'000, 0.05 / 3600, 720);
    CHECK(expected == Approx(124'951).epsilon(1e-4));
    // The wall time's spread is about its mean (a geometric number of restarts): 4,000 seeds put
    // the mean within about 2.5% (two standard errors).
    CHECK(sum / seeds == Approx(expected).epsilon(0.03));
}

TEST_CASE("a drain sharing the NICs slows the steps it overlaps, by its window's share of each cycle", "[run]") {
    // No failures, 100 hours of steps, hourly asynchronous checkpoints stalling 5 s and durable
    // 305 s after they start: each of the 99 checkpoints drains for 300 s after its stall, steps
    // 1.5x as long meanwhile: 300 x (1 - 1/1.5) = 100 s more per checkpoint. Wall clock: 360,000 +
    // 99 x (5 + 100) = 370,395 s, whole cycles passed at once or event by event.
    RunSpec s = levels(0, 0);
    s.failures.clear();
    s.checkpoint = {3600, 5, 305, 300};
    s.checkpoint.drain_slowdown = 1.5;
    RunSpec each = s;
    each.batch_cycles = false;
    REQUIRE(s.check().empty());
    const RunReport a = simulate_run(s, 1), b = simulate_run(each, 1);
    CHECK(a.checkpoints == 99);
    CHECK(a.drain_s == Approx(9900).epsilon(1e-12));
    CHECK(a.wall_s == Approx(370'395).epsilon(1e-12));
    CHECK(b.wall_s == Approx(a.wall_s).epsilon(1e-12));
    CHECK(b.drain_s == Approx(a.drain_s).epsilon(1e-12));
    // With failures, stragglers and elastic drops the shortcut still lands on the event-by-event run,
    // and every second is accounted for.
    s.failures = {{"gpu", 0.4, true}, {"software", 0.2, false}};
    s.checkpoint.interval_s = 900;
    s.stragglers = {0.1, 2.0, 1800};
    s.elastic.enabled = true;
    s.elastic.reconfigure_s = 30;
    s.elastic.copy_s = 60;
    s.elastic.slowdown = [](int out) { return out <= 2 ? 1.0 + 0.1 * out : 0.0; };
    each = s;
    each.batch_cycles = false;
    for (uint64_t seed = 1; seed <= 10; ++seed) {
        const RunReport x = simulate_run(s, seed), y = simulate_run(each, seed);
        CHECK(x.wall_s == Approx(y.wall_s).epsilon(1e-9));
        CHECK(x.drain_s == Approx(y.drain_s).epsilon(1e-9));
        CHECK(x.drain_s > 0);
        CHECK(x.wall_s == Approx(x.productive_s + x.lost_work_s + x.detect_s + x.node_wait_s + x.restart_s + x.load_s +
                                 x.checkpoint_stall_s + x.straggler_s + x.reconfigure_s + x.degraded_s + x.drain_s)
                              .epsilon(1e-12));
    }
    s.checkpoint.drain_slowdown = 0.5;
    CHECK(s.check().rfind("checkpoint.drain_slowdown", 0) == 0);
}
