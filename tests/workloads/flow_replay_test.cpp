// Communication tasks as flows (workloads/replay/flow_replay.h): tasks on two streams whose
// patterns cross one oversubscribed uplink share it while they overlap, and only then; a pattern
// whose links are its own keeps its priced duration to the picosecond.
#include "workloads/replay/flow_replay.h"

#include "hardware/network/simgrid_network.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "tests/support/fixtures.h"
#include "workloads/training/shared_fabric.h"

#include <catch2/catch.hpp>

using namespace fathom;
using hardware::Collective;
using hardware::CollectiveCall;
using hardware::CommGroup;

namespace {

// 4 single-GPU nodes, 2 per leaf, 2:1 oversubscribed: one uplink per leaf. Ring A joins ranks 0
// and 2, ring B ranks 1 and 3: both cross the leaves' single uplinks (as in the SimGrid network's
// test). An all-reduce of S alone takes R = F + S / B (fixed part F, B the NIC's 45 GB/s).
struct Rig {
    hardware::ClusterSpec cluster = testing::network_cluster(4, 1, 2, hardware::ScaleOutTopology::FatTree2, 2.0);
    std::unique_ptr<hardware::FlowNetworkModel> net = hardware::make_simgrid_network(cluster, "ecmp");
    std::unique_ptr<hardware::FlowSession> session = net->session();
    sim::Simulator sim;
    sim::TaskGraph graph{sim};
    workloads::FlowReplay replay{sim, *session};
    static constexpr double S = 256e6;
    double R = 0, F = 0;
    sim::StreamId a = 0, b = 0, c = 0;  // c: no pattern (compute)

    explicit Rig(bool with_b = true) {
        const CommGroup ga = CommGroup::of({0, 2}), gb = CommGroup::of({1, 3});
        a = graph.add_stream("a", "x");
        b = graph.add_stream("b", "x");
        c = graph.add_stream("c", "x");
        const int pa = session->add_pattern({CollectiveCall{Collective::AllReduce, S, ga, 0.0}});
        R = net->collective(Collective::AllReduce, S, ga).seconds;
        F = session->fixed_seconds(pa);
        replay.route(graph, a, pa, R);
        if (with_b)
            replay.route(graph, b, session->add_pattern({CollectiveCall{Collective::AllReduce, S, gb, 0.0}}), R);
    }
    sim::TaskId task(sim::StreamId s, double seconds) {
        return graph.add_task(s, sim::Time::from_seconds(seconds), graph.intern("t"));
    }
    void run() {
        graph.start();
        replay.run();
        REQUIRE(graph.unfinished() == 0);
    }
    double end(sim::TaskId t) const { return graph.end_time(t).seconds(); }
};

}  // namespace

TEST_CASE("flow replay: overlapping transfers through one uplink share it, in turn they do not",
          "[workloads][simgrid]") {
    SECTION("together: each moves S at B / 2") {
        Rig r;
        REQUIRE(r.R - r.F == Approx(Rig::S / 45e9).epsilon(1e-3));
        const auto x = r.task(r.a, r.R), y = r.task(r.b, r.R);
        r.run();
        CHECK(r.end(x) == Approx(r.F + 2 * (r.R - r.F)).epsilon(1e-6));
        CHECK(r.end(y) == Approx(r.F + 2 * (r.R - r.F)).epsilon(1e-6));
    }
    SECTION("staggered by half a transfer: the overlap is shared") {
        // T = R - F. A alone for T/2 (half done), then both at B/2: A's other half takes T, B's first
        // half too; B's second half alone takes T/2. A ends at 1.5 T + F, B at 2 T + F.
        Rig r;
        const double T = r.R - r.F;
        const auto x = r.task(r.a, r.R);
        const auto wait = r.task(r.c, T / 2);
        const auto y = r.task(r.b, r.R);
        r.graph.add_dependency(wait, y);
        r.run();
        CHECK(r.end(x) == Approx(1.5 * T + r.F).epsilon(1e-6));
        CHECK(r.end(y) == Approx(2 * T + r.F).epsilon(1e-6));
    }
    SECTION("one stream in turn: each as priced") {
        Rig r;
        const auto x = r.task(r.a, r.R), y = r.task(r.a, r.R);
        r.run();
        CHECK(r.end(x) == Approx(r.R).epsilon(1e-6));
        CHECK(r.end(y) == Approx(2 * r.R).epsilon(1e-6));
        CHECK(r.replay.transfers() == 2);
    }
    SECTION("a task scaled: half the time alone is half the bytes") {
        Rig r;
        const double T = r.R - r.F;
        const auto x = r.task(r.a, r.F + T / 2), y = r.task(r.b, r.R);
        r.run();
        // Both at B/2 until A's S/2 is done (at T), then B's remaining S/2 alone (T/2).
        CHECK(r.end(x) == Approx(T + r.F).epsilon(1e-6));
        CHECK(r.end(y) == Approx(1.5 * T + r.F).epsilon(1e-6));
    }
}

TEST_CASE("flow replay: a pattern alone on its links keeps its priced time exactly", "[workloads][simgrid]") {
    Rig r(false);  // only ring A declared: the uplinks are its own
    const auto x = r.task(r.a, r.R);
    const auto y = r.task(r.c, 1e-3);  // a stream without a pattern: as given
    r.run();
    CHECK(r.graph.end_time(x) == sim::Time::from_seconds(r.R));
    CHECK(r.graph.end_time(y) == sim::Time::from_seconds(1e-3));
    CHECK(r.replay.transfers() == 0);
}

TEST_CASE("jobs on one fabric are placed on whole nodes, packed or dealt out in turn", "[workloads]") {
    // 3 jobs of 2, 1 and 2 nodes of 4 GPUs on 6 nodes. Packed: nodes 0-1, 2, 3-4. Interleaved:
    // round 1 deals nodes 0, 1, 2 to jobs 1, 2, 3; round 2 nodes 3 and 4 to jobs 1 and 3.
    const auto packed = workloads::place_jobs({8, 4, 8}, 6, 4, "packed");
    CHECK(packed[0] == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(packed[1] == std::vector<int>{8, 9, 10, 11});
    CHECK(packed[2] == std::vector<int>{12, 13, 14, 15, 16, 17, 18, 19});
    const auto dealt = workloads::place_jobs({8, 4, 8}, 6, 4, "interleaved");
    CHECK(dealt[0] == std::vector<int>{0, 1, 2, 3, 12, 13, 14, 15});
    CHECK(dealt[1] == std::vector<int>{4, 5, 6, 7});
    CHECK(dealt[2] == std::vector<int>{8, 9, 10, 11, 16, 17, 18, 19});
    CHECK_THROWS_WITH(workloads::place_jobs({6}, 6, 4, "packed"), Catch::Contains("not whole nodes"));
    CHECK_THROWS_WITH(workloads::place_jobs({16, 16}, 6, 4, "packed"),
                      Catch::Contains("need 8 nodes; the cluster has 6"));
}

TEST_CASE("flow replay: transfers outside a task graph (serving's KV moves) share links and end by callback",
          "[workloads][simgrid]") {
    // Two instances of ring A's pattern, one started at 0 and one at T/2 (T = R - F, the pattern's
    // bandwidth time at scale 1): the first moves half alone, then both share the uplink at B/2,
    // as in the staggered case above: the first ends at 1.5 T + F, the second at 2 T + F. A third,
    // started after both at 3 T with scale 0.5, is alone: it ends at 3 T + T/2 + F.
    Rig r(false);
    const double T = r.R - r.F;
    std::vector<double> ends(3, -1.0);
    r.sim.schedule_at(sim::Time::from_seconds(0),
                      [&] { r.replay.start(0, 1.0, r.F, [&] { ends[0] = r.sim.now().seconds(); }); });
    r.sim.schedule_at(sim::Time::from_seconds(T / 2),
                      [&] { r.replay.start(0, 1.0, r.F, [&] { ends[1] = r.sim.now().seconds(); }); });
    r.sim.schedule_at(sim::Time::from_seconds(3 * T),
                      [&] { r.replay.start(0, 0.5, r.F, [&] { ends[2] = r.sim.now().seconds(); }); });
    r.replay.run();
    CHECK(ends[0] == Approx(1.5 * T + r.F).epsilon(1e-6));
    CHECK(ends[1] == Approx(2 * T + r.F).epsilon(1e-6));
    CHECK(ends[2] == Approx(3.5 * T + r.F).epsilon(1e-6));
    CHECK(r.replay.transfers() == 3);
}
