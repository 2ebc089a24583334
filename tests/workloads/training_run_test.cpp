// Whole training runs (workloads/run/training_run.h) against the closed forms of checkpointing
// under exponential failures (Young 1974, Daly 2006; Meta's first-order ETTR model, Kokolis et al.
// 2025): the mean time to target over seeds, the ETTR, the lost work per failure, the Young/Daly
// optimum, and the run's accounting.
#include "workloads/run/training_run.h"

#include "sim/random.h"
#include "workloads/run/run_timeline.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <sstream>
#include <string>

using namespace fathom::workloads::run;

namespace {

// 100 hours of 1-second steps; GPU failures at 0.5 an hour and software ones at 0.25 (a 16k-GPU
// job fails about every 2.8 hours: Llama 3's 466 interruptions in 54 days); hourly synchronous
// checkpoints of 60 s; 2 min to detect, 10 to restart, 5 to load.
RunSpec hundred_hours() {
    RunSpec s;
    s.step_s = 1.0;
    s.target_steps = 360'000;
    s.failures = {{"gpu", 0.5}, {"software", 0.25}};
    s.checkpoint = {3600, 60, 60, 300};
    s.detect_s = 120;
    s.restart_s = 600;
    return s;
}

double mean_wall(const RunSpec& s, int seeds) {
    double sum = 0;
    for (int seed = 1; seed <= seeds; ++seed) sum += simulate_run(s, static_cast<uint64_t>(seed)).wall_s;
    return sum / seeds;
}

}  // namespace

TEST_CASE("a run's mean time to target is the closed form's", "[run]") {
    const RunSpec s = hundred_hours();
    REQUIRE(s.check().empty());
    // Segments of a = 3660 s under lambda = 0.75/h: (1/lambda + r)(e^(lambda a) - 1) = (4800 +
    // 1020)(e^0.7625 - 1) = 6656 s each (r = 120 + 600 + 300), 99 of them, the first without the
    // load (r = 720), and a last of 3600 s: 184.75 h for 100 h of steps (ETTR 0.54).
    const double expected = expected_sync_run_s(s);
    CHECK(expected / 3600 == Approx(184.75).epsilon(0.001));
    // Over 400 seeds (about 30,000 failures) the simulated mean is within 1% of it.
    CHECK(mean_wall(s, 400) == Approx(expected).epsilon(0.01));
}

TEST_CASE("a run's ETTR is Meta's first-order model's where failures are rare", "[run]") {
    // Kokolis et al., "Revisiting Reliability in Large-Scale ML Research Clusters" (Meta, HPCA 2025):
    // E[ETTR] = (1 - lambda (u0 + dt / 2)) / (1 + w / dt), with u0 the restart overhead (detection,
    // restart, load), dt the checkpoint interval and w its blocking write: each failure costs u0 and
    // half an interval of work, each interval w. It drops second-order terms (a failure during a
    // write, failures during the lost work's redo), so it holds where lambda (u0 + dt) is small:
    // lambda = 1/12 h, dt = 1 h, w = 1 min, u0 = 10 min: (1 - (1/12)(1/6 + 1/2)) / (1 + 1/60) =
    // 0.9290, with the dropped terms under 0.5%. 1,000 hours of steps over 200 seeds (about 17,000
    // failures): the simulated ETTR within 1%.
    RunSpec s;
    s.step_s = 1.0;
    s.target_steps = 3'600'000;
    s.failures = {{"gpu", 1.0 / 12}};
    s.checkpoint = {3600, 60, 60, 300};
    s.detect_s = 120;
    s.restart_s = 180;
    const double lambda = 1.0 / 12 / 3600, u0 = 120 + 180 + 300, dt = 3600, w = 60;
    const double meta = (1 - lambda * (u0 + dt / 2)) / (1 + w / dt);
    CHECK(meta == Approx(0.9290).epsilon(0.0005));
    const double productive = static_cast<double>(s.target_steps) * s.step_s;
    CHECK(productive / mean_wall(s, 200) == Approx(meta).epsilon(0.01));
}

TEST_CASE("lost work per failure averages E[X | X < tau], about half the interval", "[run]") {
    // No stall: a failure in a segment loses the progress since its start, an exponential gap X
    // conditioned on X < tau: 1/lambda - tau / (e^(lambda tau) - 1). At lambda tau = 0.75 (tau 1 h,
    // 0.75 failures an hour) that is 0.4385 tau; it tends to tau / 2 as lambda tau -> 0.
    RunSpec s = hundred_hours();
    s.checkpoint.stall_s = s.checkpoint.durable_s = 0;
    double lost = 0, failures = 0;
    for (int seed = 1; seed <= 400; ++seed) {
        const RunReport r = simulate_run(s, static_cast<uint64_t>(seed));
        lost += r.lost_work_s;
        failures += static_cast<double>(r.failures());
    }
    const double lambda = 0.75 / 3600, tau = 3600;
    const double expected = 1 / lambda - tau / std::expm1(lambda * tau);
    CHECK(expected / tau == Approx(0.4385).epsilon(0.001));
    CHECK(lost / failures == Approx(expected).epsilon(0.01));
}

TEST_CASE("the wall clock is productive time plus what each loss took", "[run]") {
    const RunSpec s = hundred_hours();
    const RunReport r = simulate_run(s, 7);
    CHECK(r.wall_s ==
          Approx(r.productive_s + r.lost_work_s + r.detect_s + r.restart_s + r.load_s + r.checkpoint_stall_s)
              .epsilon(1e-12));
    CHECK(r.productive_s == 360'000);
    CHECK(r.ettr == Approx(r.productive_s / r.wall_s));
    CHECK(r.detect_s == 120.0 * static_cast<double>(r.failures()));
    CHECK(r.interruptions.size() == 2);
    // Causes in proportion to their rates: gpu twice software, over a long run.
    CHECK(static_cast<double>(r.interruptions[0]) > static_cast<double>(r.interruptions[1]));
    // Without failures: the target plus 99 stalls (checkpoints at 1 h ... 99 h, none at the end).
    RunSpec calm = s;
    calm.failures.clear();
    const RunReport c = simulate_run(calm, 7);
    CHECK(c.checkpoints == 99);
    CHECK(c.wall_s == 360'000 + 99 * 60.0);
    CHECK(c.wall_s == expected_sync_run_s(calm));
}

TEST_CASE("the Young/Daly interval is the closed form's optimum", "[run]") {
    RunSpec s = hundred_hours();
    const double lambda = 0.75 / 3600;
    const double yd = young_daly_interval_s(s.checkpoint.stall_s, lambda);
    CHECK(yd == Approx(std::sqrt(2 * 60 / lambda)));  // 876.4 s
    auto at = [&](double tau) {
        s.checkpoint.interval_s = tau;
        return expected_sync_run_s(s);
    };
    CHECK(at(yd) < at(yd / 2));
    CHECK(at(yd) < at(yd * 2));
}

TEST_CASE("asynchronous checkpoints stall less but are durable later", "[run]") {
    RunSpec sync = hundred_hours();
    sync.checkpoint.stall_s = sync.checkpoint.durable_s = 300;
    RunSpec async = sync;
    async.checkpoint.stall_s = 5;  // the snapshot to host memory; the drain runs beside training
    // Durable when the snapshot is: the same run as a synchronous 5 s write, draw for draw.
    RunSpec snap = sync;
    snap.checkpoint.stall_s = snap.checkpoint.durable_s = 5;
    async.checkpoint.durable_s = 5;
    CHECK(simulate_run(async, 3).wall_s == simulate_run(snap, 3).wall_s);
    // Durable after its 300 s drain: a failure during the drain rolls back one more interval, yet
    // the 295 s saved per checkpoint win over the seeds.
    async.checkpoint.durable_s = 300;
    CHECK(mean_wall(async, 200) < mean_wall(sync, 200));
    CHECK(mean_wall(async, 200) > mean_wall(snap, 200));
}

TEST_CASE("a run is a function of its seed, and bad specs say which field", "[run]") {
    const RunSpec s = hundred_hours();
    const RunReport a = simulate_run(s, 11), b = simulate_run(s, 11), c = simulate_run(s, 12);
    CHECK(a.wall_s == b.wall_s);
    CHECK(a.interruptions == b.interruptions);
    CHECK(a.wall_s != c.wall_s);
    RunSpec bad = s;
    bad.failures[0].per_hour = -1;
    CHECK_THAT(bad.check(), Catch::Contains("failures.gpu"));
    bad = s;
    bad.checkpoint.durable_s = 10;  // before its 60 s stall ends
    CHECK_THAT(bad.check(), Catch::Contains("durable"));
    bad = s;
    bad.target_steps = 0;
    CHECK_THAT(bad.check(), Catch::Contains("target_steps"));
    bad = s;
    bad.stragglers = {0.5, 0.9, 600};  // a "slowdown" that speeds steps up
    CHECK_THAT(bad.check(), Catch::Contains("stragglers"));
}

TEST_CASE("whole checkpoint cycles passed at once give the run that checkpoints event by event", "[run]") {
    // Short intervals (5 min of training per 60 s sync write, or an async 5 s stall durable 200 s
    // later) put tens of cycles between failures: the shortcut must take the same draws and land
    // on the same run, up to the rounding of a sum taken in one multiplication.
    for (double durable : {60.0, 200.0}) {
        RunSpec s = hundred_hours();
        s.checkpoint = {300, durable == 60.0 ? 60.0 : 5.0, durable, 300};
        RunSpec reference = s;
        reference.batch_cycles = false;
        for (uint64_t seed = 1; seed <= 20; ++seed) {
            const RunReport fast = simulate_run(s, seed), slow = simulate_run(reference, seed);
            CHECK(fast.interruptions == slow.interruptions);
            CHECK(fast.checkpoints == slow.checkpoints);
            CHECK(fast.wall_s == Approx(slow.wall_s).epsilon(1e-9));
            CHECK(fast.lost_work_s == Approx(slow.lost_work_s).epsilon(1e-9));
        }
    }
}

TEST_CASE("a run's timeline is the run: its spans tile the wall clock, a failure each interruption", "[run]") {
    // The training track (training, checkpoint stalls, stretches of whole cycles) and the recovery
    // track (detection, restart, load) never overlap and cover the wall clock end to end; the
    // failures track holds one instant per interruption, named by its cause.
    const RunSpec s = hundred_hours();
    std::ostringstream out;
    const RunReport r = write_run_trace(s, 5, out);
    REQUIRE(r.wall_s == simulate_run(s, 5).wall_s);
    const auto doc = nlohmann::json::parse(out.str());
    double covered = 0, end = 0, recovery = 0;
    int64_t failures = 0, checkpoints = 0;
    std::map<std::string, int64_t> causes;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const double start = e["ts"].get<double>() / 1e6, dur = e["dur"].get<double>() / 1e6;
        if (e["tid"] == 3) {
            ++failures;
            ++causes[e["name"].get<std::string>()];
            continue;
        }
        CHECK(start == Approx(end).margin(1e-3));  // each span starts where the last ended
        end = start + dur;
        covered += dur;
        if (e["tid"] == 2) recovery += dur;
        if (e["name"] == "checkpoint stall") ++checkpoints;
        if (e.contains("args")) checkpoints += e["args"]["checkpoints"].get<int64_t>();
    }
    CHECK(covered == Approx(r.wall_s).epsilon(1e-9));
    CHECK(recovery == Approx(r.detect_s + r.restart_s + r.load_s).epsilon(1e-9));
    CHECK(failures == r.failures());
    CHECK(checkpoints == r.checkpoints);
    CHECK(causes["gpu"] == r.interruptions[0]);
    CHECK(causes["software"] == r.interruptions[1]);
}

TEST_CASE("a finite spare pool holds restarts up until a node is back from repair", "[run]") {
    // Failures are drawn on up-time, so waiting for a node changes no draw: the same seed's run
    // with a pool is the unlimited one plus its waits. Without spares, a failure that takes a node
    // (here the "gpu" cause, not "software") waits for that node's 5-min repair less the 2 min of
    // detection it overlaps: 3 min each (the node is back before the job can fail again, so no two
    // repairs overlap). Spares as many as the failures: no wait at all.
    RunSpec unlimited = hundred_hours();
    unlimited.failures[1].takes_node = false;
    RunSpec none = unlimited;
    none.pool = {0, 300};
    RunSpec plenty = unlimited;
    plenty.pool = {100000, 300};
    for (uint64_t seed = 1; seed <= 10; ++seed) {
        const RunReport u = simulate_run(unlimited, seed), n = simulate_run(none, seed), p = simulate_run(plenty, seed);
        CHECK(n.interruptions == u.interruptions);
        CHECK(n.node_wait_s == Approx(180.0 * static_cast<double>(u.interruptions[0])));
        CHECK(n.wall_s == Approx(u.wall_s + n.node_wait_s).epsilon(1e-12));
        CHECK(p.wall_s == u.wall_s);
        CHECK(p.node_wait_s == 0);
    }
    // One spare and week-long repairs: a second hardware failure within a week of the first waits
    // for the first node back; never longer than a repair.
    RunSpec one = unlimited;
    one.pool = {1, 7 * 86400};
    const RunReport o = simulate_run(one, 3);
    CHECK(o.node_wait_s > 0);
    CHECK(o.node_wait_s < static_cast<double>(o.interruptions[0]) * 7 * 86400);
}

TEST_CASE("Weibull failure gaps keep the mean rate: failures per hour up match the profile's", "[run]") {
    // A renewal process's long-run rate is 1 / its mean gap (the renewal theorem): with Weibull gaps
    // of shape 0.7 (failures clustering after restarts; Schroeder and Gibson, DSN 2006, fit shapes
    // 0.7-0.8 to HPC systems' times between failures) or 1.5, scaled to the same mean, the failures
    // per hour of up-time over 200 seeds stay the profile's 0.75 (within 3%). Draws: the sampler's
    // mean is scale x Gamma(1 + 1/k).
    fathom::sim::RandomStreams streams(7);
    auto& r = streams.stream("weibull");
    double sum = 0;
    for (int i = 0; i < 200000; ++i) sum += r.weibull(0.7, 2.0);
    CHECK(sum / 200000 == Approx(2.0 * std::tgamma(1 + 1 / 0.7)).epsilon(0.01));
    for (double shape : {0.7, 1.5}) {
        RunSpec s = hundred_hours();
        s.failure_shape = shape;
        double failures = 0, up = 0;
        for (uint64_t seed = 1; seed <= 200; ++seed) {
            const RunReport x = simulate_run(s, seed);
            failures += static_cast<double>(x.failures());
            up += x.wall_s - x.detect_s - x.restart_s - x.load_s - x.node_wait_s;
        }
        CHECK(failures / (up / 3600) == Approx(0.75).epsilon(0.03));
    }
    RunSpec bad = hundred_hours();
    bad.failure_shape = 0;
    CHECK_THAT(bad.check(), Catch::Contains("failure_shape"));
}

TEST_CASE("stragglers slow every step until evicted, and each eviction is a restart", "[run]") {
    // Stragglers at 0.5 an hour, each slowing the step 1.5x for its 10 min to detection, then
    // evicted (restart and load, no detection). Each cost at most 600 x (1 - 1/1.5) = 200 s of slow
    // steps (less where checkpoint stalls or a failure's restart took part of its 10 min); the wall clock still adds up
    // to productive time plus every loss; onsets come at the rate per hour of training without a straggler (200 seeds,
    // 5%). Without stragglers the run is draw for draw the one before (their onsets have their own stream).
    RunSpec s = hundred_hours();
    s.stragglers = {0.5, 1.5, 600};
    double evictions = 0, clear_training = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
        std::vector<RunEvent> events;
        const RunReport r = simulate_run(s, seed, &events);
        CHECK(r.straggler_s <= 200.0 * static_cast<double>(r.evictions + 1) + 1e-6);
        CHECK(r.wall_s == Approx(r.productive_s + r.lost_work_s + r.detect_s + r.node_wait_s + r.restart_s + r.load_s +
                                 r.checkpoint_stall_s + r.straggler_s)
                              .epsilon(1e-9));
        evictions += static_cast<double>(r.evictions);
        for (const RunEvent& e : events)
            if (e.kind == RunEvent::Kind::Train || e.kind == RunEvent::Kind::Cycles) clear_training += e.duration_s;
    }
    CHECK(evictions / (clear_training / 3600) == Approx(0.5).epsilon(0.05));
    RunSpec none = hundred_hours();
    none.stragglers = {0, 1.5, 600};
    CHECK(simulate_run(none, 9).wall_s == simulate_run(hundred_hours(), 9).wall_s);
}
