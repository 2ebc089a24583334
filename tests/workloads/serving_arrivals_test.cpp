// Arrival drivers and the engine-time conversion they share: an event is never scheduled before
// now, whatever the clock, and a closed loop's cost follows its requests, not its clients.
#include "workloads/serving/arrivals.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace fathom::workloads::serving;
using fathom::sim::Simulator;
using fathom::sim::Time;

namespace {

// `n` requests, request i arriving at i seconds.
class CountingSource : public RequestSource {
public:
    explicit CountingSource(int64_t n) : n_(n) {}
    std::optional<Request> next() override {
        if (next_ == n_) return std::nullopt;
        Request r;
        r.id = next_;
        r.arrival_s = static_cast<double>(next_++);
        r.prompt_tokens = 10;
        r.output_tokens = 1;
        return r;
    }
    const std::vector<std::string>& slo_classes() const override { return classes_; }

private:
    int64_t n_, next_ = 0;
    std::vector<std::string> classes_{"default"};
};

}  // namespace

TEST_CASE("engine_time never lies before now, past 2^53 picoseconds", "[serving][arrivals]") {
    // now = 2^56 + 7 ps (about 20 hours). As a double, now.seconds() is 72057594037927936e-12 s:
    // converted back it is 7 ps before now (computed exactly in Python). The closed loop with zero
    // think time scheduled exactly that (an internal error after a million requests at
    // concurrency 64).
    const Time t = Time::from_ps(72057594037927943);
    REQUIRE(Time::from_seconds(t.seconds()) < t);  // the rounding this test is about
    Simulator sim;
    bool ran = false;
    sim.schedule_at(t, [&] {
        CHECK(engine_time(sim, sim.now().seconds()) == sim.now());
        CHECK(engine_time(sim, sim.now().seconds() - 1.0) == sim.now());
        CHECK(engine_time(sim, sim.now().seconds() + 1.0) > sim.now());
        sim.schedule_at(engine_time(sim, sim.now().seconds()), [&] { ran = true; });
    });
    sim.run();
    CHECK(ran);
}

TEST_CASE("a closed loop of more clients than requests sends each request once", "[serving][arrivals]") {
    // 2^62 clients and 3 requests: start() stops with the source (the loop over every client took
    // time in proportion to the clients).
    Simulator sim;
    CountingSource source(3);
    ServingSignals signals;
    std::vector<int64_t> admitted;
    ClosedLoopArrivals arrivals(
        sim, source, signals, [&](const Request& r) { admitted.push_back(r.id); }, int64_t{1} << 62, 0.0);
    arrivals.start();
    sim.run();
    CHECK(admitted == std::vector<int64_t>{0, 1, 2});
    CHECK(sim.events_processed() == 3);
}
