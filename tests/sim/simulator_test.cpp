// The event engine (sim::Simulator) and the task graph (sim::TaskGraph): event ordering,
// cancellation, run_until, hand-computed task schedules, dynamic task insertion, queueing-theory
// checks (M/M/1 and M/D/1 against their closed forms) and seed determinism.
//
// Queueing model used below: one server = one TaskGraph stream (an in-order queue that runs one
// task at a time, FIFO); customers arrive as Simulator events with exponential inter-arrival times
// drawn from a named sim::RandomStreams stream; each arrival appends a task whose duration is the
// service time. A customer's wait in queue is (task start - arrival time). Time unit: 1 us.
#include "sim/simulator.h"

#include "sim/random.h"
#include "sim/task_graph.h"
#include "sim/time.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using fathom::sim::EventId;
using fathom::sim::RandomStream;
using fathom::sim::RandomStreams;
using fathom::sim::Simulator;
using fathom::sim::StreamId;
using fathom::sim::TaskGraph;
using fathom::sim::TaskId;
using fathom::sim::Time;

namespace {

// `x` time units of 1 us each, rounded to the nearest picosecond (sim::Time's one rounding point).
Time units(double x) { return Time::from_seconds(x * 1e-6); }
double in_units(Time t) { return t.us(); }

struct QueueRun {
    double mean_wait = 0;                               // mean of (start - arrival), in time units
    std::vector<std::pair<int64_t, int64_t>> schedule;  // (start, end) of every task, in ps
};

// A single-server FIFO queue: `customers` arrivals at rate `lambda`, service time drawn by
// `service` (in time units). Arrivals are Simulator events; service is a task on one stream.
QueueRun run_single_server(uint64_t seed, int customers, double lambda,
                           const std::function<double(RandomStream&)>& service) {
    Simulator sim;
    TaskGraph graph(sim);
    const StreamId server = graph.add_stream("server", "queue");
    const uint32_t name = graph.intern("customer");
    RandomStreams rng(seed);
    RandomStream& arrivals = rng.stream("arrivals");
    RandomStream& services = rng.stream("service");
    std::vector<Time> arrived;
    arrived.reserve(static_cast<size_t>(customers));

    std::function<void()> arrive = [&] {
        arrived.push_back(sim.now());
        graph.add_task(server, units(service(services)), name);
        if (static_cast<int>(arrived.size()) < customers)
            sim.schedule_after(units(arrivals.exponential(lambda)), arrive);
    };
    graph.start();
    sim.schedule_at(units(arrivals.exponential(lambda)), arrive);
    sim.run();

    REQUIRE(graph.task_count() == static_cast<size_t>(customers));
    REQUIRE(graph.unfinished() == 0);
    QueueRun out;
    out.schedule.reserve(graph.task_count());
    double wait_sum = 0;
    for (TaskId t = 0; t < graph.task_count(); ++t) {
        wait_sum += in_units(graph.start_time(t) - arrived[t]);
        out.schedule.emplace_back(graph.start_time(t).ps(), graph.end_time(t).ps());
    }
    out.mean_wait = wait_sum / customers;
    return out;
}

}  // namespace

TEST_CASE("events at equal times run in (priority, sequence) order", "[sim]") {
    Simulator sim;
    std::vector<std::string> log;
    const Time t = Time::from_us(5);
    // Scheduled in this order; expected run order: by time first (the t-1us event), then at time t
    // by priority (lower first: -1, then the two 0s, then 3), and among equal priorities in the
    // order they were scheduled ("first" before "second").
    sim.schedule_at(
        t, [&] { log.push_back("p3"); }, 3);
    sim.schedule_at(
        t, [&] { log.push_back("first p0"); }, 0);
    sim.schedule_at(
        t, [&] { log.push_back("p-1"); }, -1);
    sim.schedule_at(
        t, [&] { log.push_back("second p0"); }, 0);
    sim.schedule_at(
        t - Time::from_us(1), [&] { log.push_back("earlier"); }, 7);
    sim.run();
    REQUIRE(log == std::vector<std::string>{"earlier", "p-1", "first p0", "second p0", "p3"});
    REQUIRE(sim.now() == t);
    REQUIRE(sim.events_processed() == 5);
    REQUIRE(sim.pending() == 0);
}

TEST_CASE("calls and handlers share one order, and a cancelled call does not run", "[sim]") {
    Simulator sim;
    std::vector<uint64_t> log;
    const Simulator::Call note = [](void* ctx, uint64_t arg) {
        static_cast<std::vector<uint64_t>*>(ctx)->push_back(arg);
    };
    const Time t = Time::from_us(2);
    sim.schedule_call(t, note, &log, 1);                          // (t, 0, seq 1)
    sim.schedule_at(t, [&] { log.push_back(2); });                // (t, 0, seq 2)
    sim.schedule_call(t, note, &log, 3, -5);                      // (t, -5): first at t
    const EventId dead = sim.schedule_call(t, note, &log, 4);     // cancelled below
    sim.schedule_call(t - Time::from_us(1), note, &log, 5, 100);  // earlier time beats priority
    REQUIRE(sim.cancel(dead));
    sim.run();
    REQUIRE(log == std::vector<uint64_t>{5, 3, 1, 2});
    REQUIRE(sim.events_processed() == 4);
}

TEST_CASE("the event heap pops 21,000 random events in (time, priority, sequence) order", "[sim]") {
    // A reference: the same keys sorted. Times drawn from 50 values and priorities from 3 so that
    // ties are common; a third of the events are cancelled, some after later ones were scheduled.
    Simulator sim;
    RandomStream rng(7);
    struct Key {
        int64_t time;
        int priority;
        int index;
    };
    std::vector<Key> keys;
    std::vector<EventId> ids;
    std::vector<int> ran;
    for (int i = 0; i < 21000; ++i) {  // ends on an index that cancels its predecessor
        const Key k{static_cast<int64_t>(rng.uniform() * 50), static_cast<int>(rng.uniform() * 3) - 1, i};
        keys.push_back(k);
        ids.push_back(sim.schedule_at(
            Time::from_ps(k.time), [&ran, i] { ran.push_back(i); }, k.priority));
        if (i % 3 == 2) REQUIRE(sim.cancel(ids[static_cast<size_t>(i - 1)]));
    }
    std::vector<Key> expected;
    for (const Key& k : keys)
        if (k.index % 3 != 1) expected.push_back(k);
    std::stable_sort(expected.begin(), expected.end(), [](const Key& a, const Key& b) {
        return a.time != b.time ? a.time < b.time : a.priority < b.priority;
    });
    sim.run();
    REQUIRE(ran.size() == expected.size());
    for (size_t i = 0; i < ran.size(); ++i) REQUIRE(ran[i] == expected[i].index);
}

TEST_CASE("an event scheduled at the current time runs after the current event", "[sim]") {
    Simulator sim;
    std::vector<int> log;
    sim.schedule_at(Time::from_us(1), [&] {
        log.push_back(1);
        sim.schedule_after(Time::zero(), [&] { log.push_back(3); });  // same time, later sequence
        log.push_back(2);
    });
    sim.schedule_at(Time::from_us(1), [&] { log.push_back(10); });  // scheduled before the nested one
    sim.run();
    // The nested event gets a larger sequence number than the second top-level event.
    REQUIRE(log == std::vector<int>{1, 2, 10, 3});
}

TEST_CASE("cancel removes a pending event exactly once", "[sim]") {
    Simulator sim;
    int ran = 0;
    const EventId a = sim.schedule_at(Time::from_us(1), [&] { ran += 1; });
    const EventId b = sim.schedule_at(Time::from_us(2), [&] { ran += 10; });
    REQUIRE(sim.pending() == 2);
    REQUIRE(sim.cancel(b));
    REQUIRE_FALSE(sim.cancel(b));  // already cancelled
    REQUIRE(sim.pending() == 1);
    // The freed slot is reused by the next event; the stale id must not cancel the new event.
    const EventId c = sim.schedule_at(Time::from_us(3), [&] { ran += 100; });
    REQUIRE_FALSE(sim.cancel(b));
    sim.run();
    REQUIRE(ran == 101);           // a and c ran, b did not
    REQUIRE_FALSE(sim.cancel(a));  // already ran
    REQUIRE_FALSE(sim.cancel(c));
    REQUIRE_FALSE(sim.cancel(EventId{}));  // invalid id
    REQUIRE(sim.now() == Time::from_us(3));
}

TEST_CASE("an event can cancel another one at the same time", "[sim]") {
    Simulator sim;
    bool victim_ran = false;
    EventId victim;
    sim.schedule_at(Time::from_us(4), [&] { REQUIRE(sim.cancel(victim)); });
    victim = sim.schedule_at(Time::from_us(4), [&] { victim_ran = true; });
    sim.run();
    REQUIRE_FALSE(victim_ran);
    REQUIRE(sim.events_processed() == 1);
}

TEST_CASE("run_until runs events up to and including t, then sets the clock to t", "[sim]") {
    Simulator sim;
    std::vector<int64_t> at;
    for (int us : {1, 2, 3}) sim.schedule_at(Time::from_us(us), [&] { at.push_back(sim.now().ps()); });
    sim.run_until(Time::from_us(2));  // events at 1 and 2 us (t inclusive)
    REQUIRE(at == std::vector<int64_t>{Time::from_us(1).ps(), Time::from_us(2).ps()});
    REQUIRE(sim.now() == Time::from_us(2));
    REQUIRE(sim.pending() == 1);
    sim.run_until(Time::from_ns(2500));  // nothing due: the clock still advances to 2.5 us
    REQUIRE(at.size() == 2);
    REQUIRE(sim.now() == Time::from_ns(2500));
    sim.run();
    REQUIRE(at.size() == 3);
    REQUIRE(sim.now() == Time::from_us(3));
}

TEST_CASE("stop ends run after the current event", "[sim]") {
    Simulator sim;
    int ran = 0;
    sim.schedule_at(Time::from_us(1), [&] {
        ++ran;
        sim.stop();
    });
    sim.schedule_at(Time::from_us(2), [&] { ++ran; });
    sim.run();
    REQUIRE(ran == 1);
    REQUIRE(sim.pending() == 1);
    REQUIRE(sim.now() == Time::from_us(1));
    sim.run();  // resumes
    REQUIRE(ran == 2);
}

TEST_CASE("two streams with a cross-stream dependency follow the hand-computed schedule", "[sim][task_graph]") {
    // Stream A: a1 (3 us), a2 (2 us), a3 (1 us).   Stream B: b1 (1 us), b2 (4 us).
    // Dependencies: a1 -> b2, b1 -> a2 (already met when a2 could start), b2 -> a3.
    //   a1: [0, 3]           (first on A, no deps)
    //   b1: [0, 1]           (first on B)
    //   b2: [max(1, 3), +4] = [3, 7]   (waits for a1 although B is free at 1)
    //   a2: [max(3, 1), +2] = [3, 5]
    //   a3: [max(5, 7), +1] = [7, 8]   (waits for b2 although A is free at 5)
    Simulator sim;
    TaskGraph g(sim);
    const StreamId A = g.add_stream("A", "dev0");
    const StreamId B = g.add_stream("B", "dev1");
    const uint32_t n = g.intern("t");
    const TaskId a1 = g.add_task(A, Time::from_us(3), n);
    const TaskId a2 = g.add_task(A, Time::from_us(2), n);
    const TaskId a3 = g.add_task(A, Time::from_us(1), n);
    const TaskId b1 = g.add_task(B, Time::from_us(1), n);
    const TaskId b2 = g.add_task(B, Time::from_us(4), n);
    g.add_dependency(a1, b2);
    g.add_dependency(b1, a2);
    g.add_dependency(b2, a3);
    std::vector<TaskId> finish_order;
    g.on_finish.connect([&](const fathom::sim::TaskRecord& r) { finish_order.push_back(r.id); });
    g.start();
    sim.run();

    auto span = [&](TaskId t) { return std::make_pair(g.start_time(t).ps(), g.end_time(t).ps()); };
    const int64_t us = Time::from_us(1).ps();
    CHECK(span(a1) == std::make_pair(0 * us, 3 * us));
    CHECK(span(b1) == std::make_pair(0 * us, 1 * us));
    CHECK(span(b2) == std::make_pair(3 * us, 7 * us));
    CHECK(span(a2) == std::make_pair(3 * us, 5 * us));
    CHECK(span(a3) == std::make_pair(7 * us, 8 * us));
    CHECK(g.unfinished() == 0);
    // End times 1, 3, 5, 7, 8 us: b1, a1, a2, b2, a3.
    CHECK(finish_order == std::vector<TaskId>{b1, a1, a2, b2, a3});
}

TEST_CASE("a contended stream runs its tasks at their stretch, rescaling the running one", "[sim][task_graph]") {
    // Stream A: t1 (10 us, stretch 2), t2 (4 us, stretch 2), t3 (3 us, stretch 1). Contended from 4
    // us: t1 has 6 us left, which now take 12 us, so t1 ends at 16 us; t2 starts contended at 16 us
    // and would take 8 us (to 24). Uncontended at 20 us: t2 had run 4 of its 8 stretched us (half
    // its work), the other half takes 2 us: t2 ends at 22 us; t3 runs alone, 22-25 us. A stream B
    // (5 us) beside it is never contended.
    Simulator sim;
    TaskGraph g(sim);
    const StreamId A = g.add_stream("A", "dev0");
    const StreamId B = g.add_stream("B", "dev0");
    const uint32_t n = g.intern("t");
    const TaskId t1 = g.add_task(A, Time::from_us(10), n);
    const TaskId t2 = g.add_task(A, Time::from_us(4), n);
    const TaskId t3 = g.add_task(A, Time::from_us(3), n);
    const TaskId b = g.add_task(B, Time::from_us(5), n);
    g.set_contended_stretch(t1, 2.0);
    g.set_contended_stretch(t2, 2.0);
    sim.schedule_at(Time::from_us(4), [&] { g.set_contended(A, true); });
    sim.schedule_at(Time::from_us(20), [&] { g.set_contended(A, false); });
    g.start();
    sim.run();
    const int64_t us = Time::from_us(1).ps();
    CHECK(g.end_time(t1).ps() == 16 * us);
    CHECK(g.start_time(t2).ps() == 16 * us);
    CHECK(g.end_time(t2).ps() == 22 * us);
    CHECK(g.end_time(t3).ps() == 25 * us);
    CHECK(g.end_time(b).ps() == 5 * us);
    CHECK(g.unfinished() == 0);
}

TEST_CASE("tasks added while the simulation runs start correctly", "[sim][task_graph]") {
    // t = 0: x (5 us) on A.
    // Event at t = 2 us: add y (1 us) on idle B -> starts at 2, ends 3.
    //                    add z (2 us) on B and a dependency x -> z added right after add_task
    //                    -> z waits for both y (stream order) and x: starts max(3, 5) = 5, ends 7.
    // Event at t = 10 us (everything idle): add w (4 us) on A -> starts at 10, ends 14.
    // on_finish of y (t = 3) adds v (1 us) on A behind x -> starts at max(3, 5) = 5, ends 6.
    Simulator sim;
    TaskGraph g(sim);
    const StreamId A = g.add_stream("A", "dev");
    const StreamId B = g.add_stream("B", "dev");
    const uint32_t n = g.intern("t");
    const TaskId x = g.add_task(A, Time::from_us(5), n);
    TaskId y = 0, z = 0, w = 0, v = 0;
    bool added_v = false;
    g.on_finish.connect([&](const fathom::sim::TaskRecord& r) {
        if (r.id == y && !added_v) {
            added_v = true;
            v = g.add_task(A, Time::from_us(1), n);
        }
    });
    sim.schedule_at(Time::from_us(2), [&] {
        y = g.add_task(B, Time::from_us(1), n);
        z = g.add_task(B, Time::from_us(2), n);
        g.add_dependency(x, z);
    });
    sim.schedule_at(Time::from_us(10), [&] { w = g.add_task(A, Time::from_us(4), n); });
    g.start();
    sim.run();

    const int64_t us = Time::from_us(1).ps();
    REQUIRE(g.task_count() == 5);
    CHECK(g.start_time(x).ps() == 0);
    CHECK(g.start_time(y).ps() == 2 * us);
    CHECK(g.end_time(y).ps() == 3 * us);
    CHECK(g.start_time(z).ps() == 5 * us);
    CHECK(g.end_time(z).ps() == 7 * us);
    CHECK(g.start_time(v).ps() == 5 * us);
    CHECK(g.end_time(v).ps() == 6 * us);
    CHECK(g.start_time(w).ps() == 10 * us);
    CHECK(g.end_time(w).ps() == 14 * us);
    CHECK(g.unfinished() == 0);
}

TEST_CASE("M/M/1 queue: mean wait in queue matches rho / (mu - lambda)", "[sim][queueing]") {
    // Poisson arrivals at lambda = 0.5 per unit, exponential service at mu = 1 per unit, one
    // server. rho = lambda / mu = 0.5; Wq = rho / (mu - lambda) = 0.5 / 0.5 = 1.0 time unit.
    // Waits are strongly correlated (relaxation time 1 / (mu (1 - sqrt(rho))^2) ~ 12 units), so the
    // sample mean converges slowly: its relative standard deviation was 0.9% with 400k customers
    // (40 seeds) and 0.6% with 1M (20 seeds). 1M customers (0.2 s) puts the 2% bound at > 3 sigma. The
    // seed is fixed, so the test is deterministic either way.
    const double lambda = 0.5, mu = 1.0;
    const double rho = lambda / mu;
    const double wq = rho / (mu - lambda);
    const QueueRun r =
        run_single_server(20240601, 1000000, lambda, [mu](RandomStream& s) { return s.exponential(mu); });
    INFO("M/M/1 mean wait " << r.mean_wait << " (theory " << wq << ")");
    CHECK(r.mean_wait == Approx(wq).epsilon(0.02));
}

TEST_CASE("M/D/1 queue: mean wait in queue matches rho / (2 mu (1 - rho))", "[sim][queueing]") {
    // Poisson arrivals at lambda = 0.5, deterministic service D = 1 (mu = 1). Pollaczek-Khinchine:
    // Wq = lambda E[S^2] / (2 (1 - rho)) = rho / (2 mu (1 - rho)) = 0.5 / (2 x 0.5) = 0.5.
    // Relative standard deviation of the sample mean with 400k customers: 0.7% (40 seeds), so 2%
    // is ~3 sigma.
    const double lambda = 0.5, mu = 1.0;
    const double rho = lambda / mu;
    const double wq = rho / (2 * mu * (1 - rho));
    const QueueRun r = run_single_server(7, 400000, lambda, [mu](RandomStream&) { return 1.0 / mu; });
    INFO("M/D/1 mean wait " << r.mean_wait << " (theory " << wq << ")");
    CHECK(r.mean_wait == Approx(wq).epsilon(0.02));
}

TEST_CASE("a seed reproduces a bit-identical schedule, another seed does not", "[sim][determinism]") {
    auto exp_service = [](RandomStream& s) { return s.exponential(1.0); };
    const QueueRun a = run_single_server(42, 20000, 0.5, exp_service);
    const QueueRun b = run_single_server(42, 20000, 0.5, exp_service);
    const QueueRun c = run_single_server(43, 20000, 0.5, exp_service);
    REQUIRE(a.schedule.size() == 20000);
    CHECK(a.schedule == b.schedule);  // exact (integer picoseconds), not approximate
    CHECK(a.schedule != c.schedule);
}

TEST_CASE("random streams depend only on (seed, name)", "[sim][determinism]") {
    // Drawing from another stream first must not shift the numbers of this one.
    RandomStreams one(5), two(5);
    two.stream("other").next_u64();
    for (int i = 0; i < 100; ++i) REQUIRE(one.stream("x").next_u64() == two.stream("x").next_u64());
    RandomStreams three(6);
    CHECK(RandomStreams(5).stream("x").next_u64() != three.stream("x").next_u64());
    // uniform() in [0, 1)
    RandomStream& u = one.stream("u");
    for (int i = 0; i < 1000; ++i) {
        const double x = u.uniform();
        REQUIRE(x >= 0.0);
        REQUIRE(x < 1.0);
    }
}

TEST_CASE("simulated time refuses to wrap around", "[sim][robustness]") {
    // int64 picoseconds hold about 106 days (9.22e18 ps). A single duration beyond it, a sum or a
    // product that would pass it are input errors (the input's scale), never a wrapped clock.
    const Time day = Time::from_seconds(86400);
    const Time hundred = day * 100;
    CHECK(hundred.seconds() == Approx(8.64e6));
    CHECK_THROWS_AS(hundred + day * 7, fathom::sim::InputError);
    Time t = hundred;
    CHECK_THROWS_AS(t += day * 7, fathom::sim::InputError);
    CHECK_THROWS_AS(day * 107, fathom::sim::InputError);
    CHECK_THROWS_AS(Time::from_seconds(1e7), fathom::sim::InputError);
    // Its message gives the duration in 6 significant digits, not std::to_string's 300 (issue 37).
    CHECK_THROWS_WITH(Time::from_seconds(1.5e300), Catch::StartsWith("a duration of 1.5e+300 s exceeds"));
    CHECK((hundred + day * 6).seconds() == Approx(106 * 86400.0));
    CHECK((hundred - day).seconds() == Approx(99 * 86400.0));
}
