// Communication tasks timed by the network (hardware/network/transfer_timer.h). The closed form
// ends a transfer task at its start + the collective's closed form. On the flow network, tasks
// whose communicators cross one oversubscribed uplink share it max-min while they overlap, and only
// then; a communicator whose links are its own keeps its planned duration to the picosecond.
#include "hardware/network/transfer_timer.h"

#include "hardware/network/simgrid_network.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "tests/support/fixtures.h"
#include "workloads/training/shared_fabric.h"

#include <catch2/catch.hpp>

using namespace fathom;
using hardware::Collective;
using hardware::CommGroup;
using hardware::Transfer;

TEST_CASE("closed form: a transfer task ends at its start + the collective's closed form", "[workloads][network]") {
    // A DP all-reduce of 1 GB over 16 GPUs of 2 nodes, after 1 ms of compute: the task starts at
    // 1 ms and ends at 1 ms + the analytical network's closed form for it; the task's planned
    // duration is that closed form (the cost oracle's answer), and the timer keeps it.
    const hardware::ClusterSpec cluster = testing::network_cluster(2, 8, 2, hardware::ScaleOutTopology::FatTree2);
    const auto net = hardware::make_analytical_network(cluster);
    const Transfer t{Collective::AllReduce, 1e9, CommGroup{16, 1}};
    const double closed = net->collective(Collective::AllReduce, 1e9, CommGroup{16, 1}).seconds;
    REQUIRE(closed > 0);
    sim::Simulator sim;
    sim::TaskGraph graph(sim);
    const sim::StreamId compute = graph.add_stream("compute", "x"), dp = graph.add_stream("dp-comm", "x");
    const auto timer = net->timer(sim);
    const int comm =
        timer->add_communicator({Collective::AllReduce, [&] { return std::vector<CommGroup>{t.group}; }, {}});
    const sim::TaskId c = graph.add_task(compute, sim::Time::from_seconds(1e-3), graph.intern("F"));
    const sim::TaskId x = graph.add_task(dp, sim::Time::from_seconds(net->cost(t).seconds), graph.intern("dp"));
    graph.add_dependency(c, x);
    timer->carry(graph, x, t, comm);
    graph.start();
    timer->run();
    CHECK(graph.start_time(x) == sim::Time::from_seconds(1e-3));
    CHECK(graph.end_time(x) == sim::Time::from_seconds(1e-3) + sim::Time::from_seconds(closed));
    CHECK(timer->flow_transfers(graph) == 0);
    // Outside a graph: at now + the closed form.
    double arrived = -1;
    sim.schedule_at(sim::Time::from_seconds(2.0),
                    [&] { timer->start(t, comm, [&] { arrived = sim.now().seconds(); }); });
    timer->run();
    CHECK(arrived == sim::Time::from_seconds(2.0 + closed).seconds());
}

namespace {

// 4 single-GPU nodes, 2 per leaf, 2:1 oversubscribed: one uplink per leaf. Ring A joins ranks 0
// and 2, ring B ranks 1 and 3: both cross the leaves' single uplinks (as in the SimGrid network's
// test). An all-reduce of S alone takes R = F + S / B (fixed part F, B the NIC's 45 GB/s).
struct Rig {
    hardware::ClusterSpec cluster = testing::network_cluster(4, 1, 2, hardware::ScaleOutTopology::FatTree2, 2.0);
    std::unique_ptr<hardware::FlowNetworkModel> net = hardware::make_simgrid_network(cluster, "ecmp");
    sim::Simulator sim;
    sim::TaskGraph graph{sim};
    std::unique_ptr<hardware::TransferTimer> timer = net->timer(sim);
    static constexpr double S = 256e6;
    const CommGroup ga = CommGroup::of({0, 2}), gb = CommGroup::of({1, 3});
    double R = 0, F = 0;
    int ca = -1, cb = -1;
    sim::StreamId a = 0, b = 0, c = 0;  // c: compute

    explicit Rig(bool with_b = true) {
        a = graph.add_stream("a", "x");
        b = graph.add_stream("b", "x");
        c = graph.add_stream("c", "x");
        R = net->collective(Collective::AllReduce, hardware::kReferenceBytes, ga).seconds;
        F = net->plan(Collective::AllReduce, hardware::kReferenceBytes, ga).fixed_seconds;
        auto ring = [this](const CommGroup& g) {
            return hardware::Communicator{Collective::AllReduce, [g] { return std::vector<CommGroup>{g}; },
                                          [this] { return R; }};
        };
        ca = timer->add_communicator(ring(ga));
        if (with_b) cb = timer->add_communicator(ring(gb));
    }
    // A transfer task planned at `seconds` on ring A or B (its communicator).
    sim::TaskId transfer(sim::StreamId s, double seconds) {
        const sim::TaskId t = graph.add_task(s, sim::Time::from_seconds(seconds), graph.intern("t"));
        const bool on_a = s == a;
        timer->carry(graph, t, Transfer{Collective::AllReduce, S, on_a ? ga : gb}, on_a ? ca : cb);
        return t;
    }
    sim::TaskId compute(double seconds) {
        return graph.add_task(c, sim::Time::from_seconds(seconds), graph.intern("c"));
    }
    void run() {
        graph.start();
        timer->run();
        REQUIRE(graph.unfinished() == 0);
    }
    double end(sim::TaskId t) const { return graph.end_time(t).seconds(); }
};

}  // namespace

TEST_CASE("flow timer: overlapping transfers through one uplink share it max-min, in turn they do not",
          "[workloads][simgrid]") {
    // T = R - F, the bandwidth time of a task planned at R (S' = B T bytes through the uplink).
    SECTION("together: the uplink's B shared max-min, B/2 each, so each takes 2 T") {
        Rig r;
        REQUIRE(r.R - r.F == Approx(hardware::kReferenceBytes / 45e9).epsilon(1e-3));
        const auto x = r.transfer(r.a, r.R), y = r.transfer(r.b, r.R);
        r.run();
        CHECK(r.end(x) == Approx(r.F + 2 * (r.R - r.F)).epsilon(1e-6));
        CHECK(r.end(y) == Approx(r.F + 2 * (r.R - r.F)).epsilon(1e-6));
        CHECK(r.timer->flow_transfers(r.graph) == 2);
    }
    SECTION("staggered by half a transfer: the overlap is shared") {
        // A alone for T/2 at B (half done), then both at B/2: A's other half takes T, B's first
        // half too; B's second half alone at B takes T/2. A ends at 1.5 T + F, B at 2 T + F.
        Rig r;
        const double T = r.R - r.F;
        const auto x = r.transfer(r.a, r.R);
        const auto wait = r.compute(T / 2);
        const auto y = r.transfer(r.b, r.R);
        r.graph.add_dependency(wait, y);
        r.run();
        CHECK(r.end(x) == Approx(1.5 * T + r.F).epsilon(1e-6));
        CHECK(r.end(y) == Approx(2 * T + r.F).epsilon(1e-6));
    }
    SECTION("one stream in turn: each as planned") {
        Rig r;
        const auto x = r.transfer(r.a, r.R), y = r.transfer(r.a, r.R);
        r.run();
        CHECK(r.end(x) == Approx(r.R).epsilon(1e-6));
        CHECK(r.end(y) == Approx(2 * r.R).epsilon(1e-6));
        CHECK(r.timer->flow_transfers() == 2);
    }
    SECTION("a task planned at half the time moves half the bytes") {
        Rig r;
        const double T = r.R - r.F;
        const auto x = r.transfer(r.a, r.F + T / 2), y = r.transfer(r.b, r.R);
        r.run();
        // Both at B/2 until A's half is done (at T), then B's remaining half alone (T/2).
        CHECK(r.end(x) == Approx(T + r.F).epsilon(1e-6));
        CHECK(r.end(y) == Approx(1.5 * T + r.F).epsilon(1e-6));
    }
}

TEST_CASE("flow timer: a communicator alone on its links keeps its planned time exactly", "[workloads][simgrid]") {
    Rig r(false);  // only ring A declared: the uplinks are its own
    const auto x = r.transfer(r.a, r.R);
    const auto y = r.compute(1e-3);  // not a transfer: as given
    r.run();
    CHECK(r.graph.end_time(x) == sim::Time::from_seconds(r.R));
    CHECK(r.graph.end_time(y) == sim::Time::from_seconds(1e-3));
    CHECK(r.timer->flow_transfers() == 0);
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

TEST_CASE("flow timer: transfers outside a task graph (serving's KV moves) share links and end by callback",
          "[workloads][simgrid]") {
    // Two transfers of kReferenceBytes on ring A's communicator, one started at 0 and one at T/2
    // (T = R - F): the first moves half alone, then both share the uplink at B/2, as in the
    // staggered case above: the first ends at 1.5 T + F, the second at 2 T + F. A third of half the
    // bytes, started after both at 3 T, is alone: it ends at 3 T + T/2 + F.
    Rig r(false);
    const double T = r.R - r.F;
    const Transfer whole{Collective::AllReduce, hardware::kReferenceBytes, r.ga};
    Transfer half = whole;
    half.bytes /= 2;
    std::vector<double> ends(3, -1.0);
    r.sim.schedule_at(sim::Time::from_seconds(0),
                      [&] { r.timer->start(whole, r.ca, [&] { ends[0] = r.sim.now().seconds(); }); });
    r.sim.schedule_at(sim::Time::from_seconds(T / 2),
                      [&] { r.timer->start(whole, r.ca, [&] { ends[1] = r.sim.now().seconds(); }); });
    r.sim.schedule_at(sim::Time::from_seconds(3 * T),
                      [&] { r.timer->start(half, r.ca, [&] { ends[2] = r.sim.now().seconds(); }); });
    r.timer->run();
    CHECK(ends[0] == Approx(1.5 * T + r.F).epsilon(1e-6));
    CHECK(ends[1] == Approx(2 * T + r.F).epsilon(1e-6));
    CHECK(ends[2] == Approx(3.5 * T + r.F).epsilon(1e-6));
    CHECK(r.timer->flow_transfers() == 3);
}
