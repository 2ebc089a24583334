// Communication tasks timed by the network (hardware/network/transfer_timer.h). The closed form
// ends a transfer task at its start + the collective's closed form. On the flow network a task runs
// its own transfers' flows: alone it takes their flows' time plus their fixed parts, one transfer
// after another; tasks whose communicators cross one oversubscribed uplink share it max-min while
// they overlap, and only then. A task's planned duration is not used.
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
using hardware::TransferPart;

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
    CHECK_FALSE(timer->times_tasks());  // a graph ends its tasks after their planned cost by itself
    const int comm = timer->add_communicator({[&] { return std::vector<CommGroup>{t.group}; }, std::nullopt});
    const sim::TaskId c = graph.add_task(compute, sim::Time::from_seconds(1e-3), graph.intern("F"));
    const sim::TaskId x = graph.add_task(dp, sim::Time::from_seconds(net->cost(t).seconds), graph.intern("dp"));
    graph.add_dependency(c, x);
    timer->carry(graph, x, {TransferPart{t, comm}});
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

// 4 single-GPU nodes, 2 per leaf, 2:1 oversubscribed: one uplink per leaf, of B = 45 GB/s (the
// NIC's 50 GB/s at 90%). Ring A joins ranks 0 and 2, ring B ranks 1 and 3: both cross the leaves'
// single uplinks (as in the SimGrid network's test). A ring all-reduce of S over n ranks sends
// 2(n-1)/n S from each rank to its ring neighbour, all flows at once (NCCL pipelines its chunks);
// alone on links of B its flows take 2(n-1)/n S / B and the call F(S) more, its fixed part
// (launch, latencies, pipeline fill: NetworkModel::plan). Here n = 2: T = S / B after F(S) (which
// is also the closed form, the ring's bandwidth being B).
struct Rig {
    hardware::ClusterSpec cluster = testing::network_cluster(4, 1, 2, hardware::ScaleOutTopology::FatTree2, 2.0);
    std::unique_ptr<hardware::FlowNetworkModel> net = hardware::make_simgrid_network(cluster, "ecmp");
    sim::Simulator sim;
    sim::TaskGraph graph{sim};
    std::unique_ptr<hardware::TransferTimer> timer = net->timer(sim);
    static constexpr double S = 256e6, B = 45e9, T = S / B;
    const CommGroup ga = CommGroup::of({0, 2}), gb = CommGroup::of({1, 3});
    int ca = -1, cb = -1;
    sim::StreamId a = 0, b = 0, c = 0;  // c: compute

    // `outside`: the collective of transfers started outside graphs on ring A.
    explicit Rig(std::optional<Collective> outside = std::nullopt) {
        a = graph.add_stream("a", "x");
        b = graph.add_stream("b", "x");
        c = graph.add_stream("c", "x");
        ca = timer->add_communicator({[this] { return std::vector<CommGroup>{ga}; }, outside});
        cb = timer->add_communicator({[this] { return std::vector<CommGroup>{gb}; }, std::nullopt});
    }
    // The fixed part of a call on ring A.
    double F(Collective op = Collective::AllReduce, double bytes = S) const {
        return net->plan(op, bytes, ga).fixed_seconds;
    }
    TransferPart part(sim::StreamId s, Collective op, double bytes, double share = 1, int count = 1) const {
        const bool on_a = s == a;
        return TransferPart{Transfer{op, bytes, on_a ? ga : gb}, on_a ? ca : cb, share, count};
    }
    // A task on ring A or B (its stream) moving `parts`; planned at 1 s, which the flows ignore.
    sim::TaskId task(sim::StreamId s, const std::vector<TransferPart>& parts) {
        const sim::TaskId t = graph.add_task(s, sim::Time::from_seconds(1.0), graph.intern("t"));
        timer->carry(graph, t, parts);
        return t;
    }
    // An all-reduce of `bytes` on ring A or B.
    sim::TaskId transfer(sim::StreamId s, double bytes = S) { return task(s, {part(s, Collective::AllReduce, bytes)}); }
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
    SECTION("together: the uplink's B shared max-min, B/2 each, so each takes 2 T") {
        Rig r;
        REQUIRE(r.F() > 0);
        const auto x = r.transfer(r.a), y = r.transfer(r.b);
        r.run();
        CHECK(r.end(x) == Approx(r.F() + 2 * r.T).epsilon(1e-6));
        CHECK(r.end(y) == Approx(r.F() + 2 * r.T).epsilon(1e-6));
        CHECK(r.timer->flow_transfers(r.graph) == 2);
    }
    SECTION("staggered by half a transfer: the overlap is shared") {
        // A alone for T/2 at B (half done), then both at B/2: A's other half takes T, B's first
        // half too; B's second half alone at B takes T/2. A ends at 1.5 T + F, B at 2 T + F.
        Rig r;
        const auto x = r.transfer(r.a);
        const auto wait = r.compute(r.T / 2);
        const auto y = r.transfer(r.b);
        r.graph.add_dependency(wait, y);
        r.run();
        CHECK(r.end(x) == Approx(1.5 * r.T + r.F()).epsilon(1e-6));
        CHECK(r.end(y) == Approx(2 * r.T + r.F()).epsilon(1e-6));
    }
    SECTION("one stream in turn: each in its own time, T + F") {
        // B's transfer comes long after both (so ring A's links are not its own: it runs as flows).
        Rig r;
        const auto x = r.transfer(r.a), y = r.transfer(r.a);
        const auto wait = r.compute(10 * r.T);
        const auto z = r.transfer(r.b);
        r.graph.add_dependency(wait, z);
        r.run();
        CHECK(r.end(x) == Approx(r.T + r.F()).epsilon(1e-6));
        CHECK(r.end(y) == Approx(2 * (r.T + r.F())).epsilon(1e-6));
        CHECK(r.end(z) == Approx(10 * r.T + r.T + r.F()).epsilon(1e-6));
        CHECK(r.timer->flow_transfers() == 3);
    }
    SECTION("a transfer of half the bytes moves half as long") {
        // Both at B/2 until A's S/2 are through (at T), then B's remaining S/2 alone (T/2); A's
        // fixed part is that of S/2.
        Rig r;
        const auto x = r.transfer(r.a, Rig::S / 2), y = r.transfer(r.b);
        r.run();
        CHECK(r.end(x) == Approx(r.T + r.F(Collective::AllReduce, Rig::S / 2)).epsilon(1e-6));
        CHECK(r.end(y) == Approx(1.5 * r.T + r.F()).epsilon(1e-6));
    }
}

TEST_CASE("flow timer: alone, a transfer takes its own flows' time, not its planned one", "[workloads][simgrid]") {
    // Only ring A carries transfers, so its links are its own: its task takes F + 2(n-1)/n S / B =
    // F + T (n = 2), computed without the shared session, whatever it was planned at (1 s); the
    // ring's closed form is the same sum.
    Rig r;
    const auto x = r.transfer(r.a);
    const auto y = r.compute(1e-3);  // not a transfer: as given
    r.run();
    CHECK(r.end(x) == Approx(r.F() + r.T).epsilon(1e-9));
    CHECK(r.end(x) == Approx(r.net->collective(Collective::AllReduce, Rig::S, r.ga).seconds).epsilon(1e-9));
    CHECK(r.graph.end_time(y) == sim::Time::from_seconds(1e-3));
    CHECK(r.timer->flow_transfers() == 0);
}

TEST_CASE("flow timer: a task carrying several transfers runs them one after another", "[workloads][simgrid]") {
    // An all-reduce of S then a reduce-scatter of S on ring A, in one task. Alone each takes its
    // flows' time plus its fixed part: the all-reduce F_ar + T (each rank sends 2(n-1)/n S = S),
    // the reduce-scatter F_rs + T/2 (each rank sends (n-1)/n S = S/2): the task ends at the sum.
    const double F_rs = Rig().F(Collective::ReduceScatter);
    SECTION("alone on its links (computed outside the session)") {
        Rig r;
        const auto x =
            r.task(r.a, {r.part(r.a, Collective::AllReduce, Rig::S), r.part(r.a, Collective::ReduceScatter, Rig::S)});
        r.run();
        CHECK(r.end(x) == Approx(r.F() + r.T + F_rs + r.T / 2).epsilon(1e-9));
        CHECK(r.timer->flow_transfers() == 0);
    }
    SECTION("as flows on the shared session, with ring B idle meanwhile") {
        Rig r;
        const auto x =
            r.task(r.a, {r.part(r.a, Collective::AllReduce, Rig::S), r.part(r.a, Collective::ReduceScatter, Rig::S)});
        const auto wait = r.compute(10 * r.T);
        const auto z = r.transfer(r.b);
        r.graph.add_dependency(wait, z);
        r.run();
        CHECK(r.end(x) == Approx(r.F() + r.T + F_rs + r.T / 2).epsilon(1e-6));
        CHECK(r.timer->flow_transfers(r.graph) == 3);
    }
    SECTION("a transfer twice (count 2), and half of one (share 0.5: half its bytes and fixed part)") {
        Rig r;
        const auto x = r.task(r.a, {r.part(r.a, Collective::AllReduce, Rig::S, 1, 2)});
        const auto y = r.task(r.a, {r.part(r.a, Collective::AllReduce, Rig::S, 0.5)});
        r.run();
        CHECK(r.end(x) == Approx(2 * (r.F() + r.T)).epsilon(1e-9));
        CHECK(r.end(y) - r.end(x) == Approx((r.F() + r.T) / 2).epsilon(1e-9));
    }
    SECTION("two transfers of two tasks at once share the uplink: the second task's first transfer too") {
        // A: all-reduce S then reduce-scatter S; B: all-reduce S. Both all-reduces at B/2: their
        // flows end at 2 T. B ends at 2 T + F. A's fixed part F, then its reduce-scatter (S/2 per
        // rank) alone at B: T/2, and F_rs: A ends at 2 T + F + T/2 + F_rs.
        Rig r;
        const auto x =
            r.task(r.a, {r.part(r.a, Collective::AllReduce, Rig::S), r.part(r.a, Collective::ReduceScatter, Rig::S)});
        const auto y = r.transfer(r.b);
        r.run();
        CHECK(r.end(y) == Approx(2 * r.T + r.F()).epsilon(1e-6));
        CHECK(r.end(x) == Approx(2 * r.T + r.F() + r.T / 2 + F_rs).epsilon(1e-6));
    }
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
    // Two all-reduces of S on ring A's communicator, one started at 0 and one at T/2: the first
    // moves half alone, then both share the uplink at B/2, as in the staggered case above: the
    // first ends at 1.5 T + F, the second at 2 T + F. A third of half the bytes, started after both
    // at 3 T, is alone: it ends at 3 T + T/2 + F(S/2).
    Rig r(Collective::AllReduce);
    const double T = Rig::T;
    const Transfer whole{Collective::AllReduce, Rig::S, r.ga};
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
    CHECK(ends[0] == Approx(1.5 * T + r.F()).epsilon(1e-6));
    CHECK(ends[1] == Approx(2 * T + r.F()).epsilon(1e-6));
    CHECK(ends[2] == Approx(3.5 * T + r.F(Collective::AllReduce, Rig::S / 2)).epsilon(1e-6));
    CHECK(r.timer->flow_transfers() == 3);
}
