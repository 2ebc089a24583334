// The SimGrid flow-level network against the analytical closed forms: alone on its links a
// collective takes the closed-form time (within 3%); sharing an oversubscribed uplink, or hashed
// onto colliding uplinks by ECMP, it takes the time the shared link's load gives.
#include "hardware/network/simgrid_network.h"

#include "hardware/network/flow_solver.h"
#include "hardware/routing/routing.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace fathom::hardware;

namespace {
using fathom::testing::network_cluster;
ClusterSpec cluster(int nodes, int gpus_per_node, int nodes_per_leaf, ScaleOutTopology t, double oversub = 1) {
    return network_cluster(nodes, gpus_per_node, nodes_per_leaf, t, oversub);
}
}  // namespace

TEST_CASE("flow solver: max-min sharing of one link, completions in order", "[hardware][simgrid]") {
    // Two flows on one 100 B/s link: 100 B and 300 B. Shared: 50 B/s each until the first ends at
    // t = 2; the second then has 200 B left alone at 100 B/s: ends at t = 4.
    auto s = make_simgrid_solver();
    const int l = s->add_link(100);
    const int p = s->add_path({l});
    s->start(p, 100, 1);
    s->start(p, 300, 2);
    std::vector<uint64_t> done;
    CHECK(s->advance(1.0, done) == Approx(1.0));  // stops at fathom's own time first
    CHECK(done.empty());
    CHECK(s->advance(1e9, done) == Approx(2.0));
    CHECK(done == std::vector<uint64_t>{1});
    // Flow 2 has 200 B left at t = 2. Flow 3 starts then with 100 B: both at 50 B/s, flow 3 ends
    // at t = 4; flow 2 has 100 B left, alone at 100 B/s: ends at t = 5.
    s->start(p, 100, 3);
    CHECK(s->advance(1e9, done) == Approx(4.0));
    CHECK(done == std::vector<uint64_t>{3});
    CHECK(s->advance(1e9, done) == Approx(5.0));
    CHECK(done == std::vector<uint64_t>{2});
    // Nothing left: advancing to a time just returns it.
    CHECK(s->advance(7.0, done) == Approx(7.0));
    CHECK(done.empty());
}

TEST_CASE("lone-flow shortcut: the same ends as SimGrid alone, with only the contended flows in it",
          "[hardware][simgrid]") {
    // Links: 0 and 1 of 100 B/s, 2 of 50 B/s. Group A at t = 0: a1 (300 B on links 0, 2) and a2
    // (100 B on links 0, 1) share link 0, so a1 gets 50 (its link 2 is 50 anyway) and a2 the other
    // 50: a2 ends at 2, then a1 alone at 50 B/s (link 2) ends at 6. Lone: computed without SimGrid.
    // Flow b (100 B on link 1) at t = 3, while a1 runs on links 0 and 2 only: lone too, ends at 4.
    // Flow c (50 B on link 2) at t = 4: link 2 is a1's, so a1 joins SimGrid with its 100 B left and
    // they share link 2 at 25 B/s: c ends at 6, a1 has 50 B left, alone at 50 B/s: ends at 7.
    auto script = [](FlowSolver& s) {
        const int l0 = s.add_link(100), l1 = s.add_link(100), l2 = s.add_link(50);
        const int p1 = s.add_path({l0, l2}), p2 = s.add_path({l0, l1}), pb = s.add_path({l1}), pc = s.add_path({l2});
        std::vector<std::pair<uint64_t, double>> ends;
        std::vector<uint64_t> done;
        auto run_to = [&](double until) {
            for (;;) {
                const double t = s.advance(until, done);
                for (uint64_t tag : done) ends.emplace_back(tag, t);
                if (done.empty() || t >= until) return;
            }
        };
        s.start(p1, 300, 1);
        s.start(p2, 100, 2);
        run_to(3.0);
        s.start(pb, 100, 3);
        run_to(4.0);
        s.start(pc, 50, 4);
        run_to(1e9);
        return ends;
    };
    const auto simgrid = make_simgrid_solver();
    const auto shortcut = make_lone_flow_solver(make_simgrid_solver());
    const auto expected = script(*simgrid);
    const auto got = script(*shortcut);
    const std::vector<std::pair<uint64_t, double>> derived = {{2, 2.0}, {3, 4.0}, {4, 6.0}, {1, 7.0}};
    REQUIRE(expected.size() == derived.size());
    REQUIRE(got.size() == derived.size());
    for (size_t i = 0; i < derived.size(); ++i) {
        CHECK(expected[i].first == derived[i].first);
        CHECK(expected[i].second == Approx(derived[i].second).epsilon(1e-9));
        CHECK(got[i].first == derived[i].first);
        CHECK(got[i].second == Approx(derived[i].second).epsilon(1e-9));
    }
}

TEST_CASE("SimGrid network agrees with the analytical closed forms on uncontended collectives", "[hardware][simgrid]") {
    // Rail-optimized, 16 nodes under one leaf group: every rail has its own leaf, so DP rings of
    // the 8 local indices never share a link; inside a node the switch is non-blocking.
    const ClusterSpec c = cluster(16, 8, 16, ScaleOutTopology::RailOptimized);
    const auto analytical = make_analytical_network(c);
    const auto flows = make_simgrid_network(c, "ecmp");
    struct Case {
        Collective op;
        CommGroup group;
        const char* what;
    };
    const std::vector<Case> cases = {
        {Collective::AllReduce, CommGroup{8, 1}, "TP all-reduce in a node"},
        {Collective::AllGather, CommGroup{8, 1}, "TP all-gather in a node"},
        {Collective::AllReduce, CommGroup{16, 8}, "DP all-reduce, one GPU per node (8 groups on 8 rails)"},
        {Collective::ReduceScatter, CommGroup{32, 1}, "32 GPUs over 4 nodes"},
        {Collective::AllToAll, CommGroup{16, 1}, "all-to-all over 2 nodes"},
        {Collective::AllGather, CommGroup{64, 2}, "stride-2 group over 16 nodes"},
    };
    for (const auto& k : cases)
        for (double bytes : {4e6, 64e6, 1e9}) {
            INFO(k.what << ", " << bytes << " B");
            const double a = analytical->collective(k.op, bytes, k.group).seconds;
            const double f = flows->collective(k.op, bytes, k.group).seconds;
            CHECK(f == Approx(a).epsilon(0.03));
        }
}

TEST_CASE("SimGrid network with spraying agrees with the closed forms on a fat-tree-3 across pods",
          "[hardware][simgrid]") {
    // 32 nodes, 2 per leaf, pods of 2 leaves: DP rings (one GPU per node, 8 groups) and 64-GPU
    // groups (4 per node) climb to the core tier; spraying loads every uplink evenly, so each
    // GPU's NIC share is the bottleneck, as in the closed form.
    const ClusterSpec c = cluster(32, 8, 2, ScaleOutTopology::FatTree3);
    const auto analytical = make_analytical_network(c);
    const auto flows = make_simgrid_network(c, "spray");
    for (const CommGroup& g : {CommGroup{32, 8}, CommGroup{64, 4}}) {
        INFO("group of " << g.size << ", stride " << g.stride);
        CHECK(flows->collective(Collective::AllReduce, 1e9, g).seconds ==
              Approx(analytical->collective(Collective::AllReduce, 1e9, g).seconds).epsilon(0.03));
    }
}

TEST_CASE("SimGrid network: two rings through one oversubscribed uplink each take twice as long",
          "[hardware][simgrid]") {
    // 4 single-GPU nodes, 2 per leaf, 2:1 oversubscribed: one uplink per leaf, one spine. Ring A
    // joins ranks 0 and 2, ring B ranks 1 and 3; each all-reduce of S sends 2 (n-1)/n S = S from
    // each member across the leaves. Alone, A's flow has the uplink to itself: S / B after the
    // fixed part. With B, the two flows share it: 2 S / B. (The analytical model counts only the
    // nodes a group spans, two, and sees them under one leaf of two: it charges S / B either way.)
    const ClusterSpec c = cluster(4, 1, 2, ScaleOutTopology::FatTree2, 2.0);
    const auto net = make_simgrid_network(c, "ecmp");
    const double S = 256e6, B = 50e9 * 0.9;
    const CollectiveCall a{Collective::AllReduce, S, CommGroup::of({0, 2}), 0.0};
    const CollectiveCall b{Collective::AllReduce, S, CommGroup::of({1, 3}), 0.0};
    const double fixed = net->plan(Collective::AllReduce, S, a.group).fixed_seconds;
    const double alone = net->run({a})[0].seconds();
    const auto both = net->run({a, b});
    CHECK(alone - fixed == Approx(S / B).epsilon(1e-3));
    CHECK(both[0].seconds() - fixed == Approx(2 * S / B).epsilon(1e-3));
    CHECK(both[1].seconds() - fixed == Approx(2 * S / B).epsilon(1e-3));
    CHECK(make_analytical_network(c)->collective(Collective::AllReduce, S, a.group).seconds ==
          Approx(alone).epsilon(1e-3));
    // Ring B starting when A is half done: A's second half is shared.
    const auto staggered = net->run({a, CollectiveCall{Collective::AllReduce, S, b.group, S / B / 2}});
    CHECK(staggered[0].seconds() - fixed == Approx(S / B / 2 + S / B).epsilon(1e-3));
}

TEST_CASE("SimGrid network: ECMP collisions on the spines, and spraying removes them", "[hardware][simgrid]") {
    // 2 nodes x 8 GPUs, one node per leaf, 8 spines (1:1). A DP all-reduce of the 8 local indices:
    // 8 two-member rings, each sending S across the leaves in each direction. Spraying spreads
    // every flow over all 8 spines: no uplink carries more than its share, the closed form holds.
    // ECMP puts each flow on one spine by hash: the busiest uplink's flow count k gives k S / B.
    const ClusterSpec c = cluster(2, 8, 1, ScaleOutTopology::FatTree2);
    const double S = 512e6, B = 50e9 * 0.9;
    const CommGroup dp{2, 8};
    const auto analytical = make_analytical_network(c);
    const auto spray = make_simgrid_network(c, "spray");
    const auto ecmp = make_simgrid_network(c, "ecmp");
    const double closed = analytical->collective(Collective::AllReduce, S, dp).seconds;
    CHECK(spray->collective(Collective::AllReduce, S, dp).seconds == Approx(closed).epsilon(0.01));

    // The busiest leaf-to-spine link under ECMP, from the routes the network's flows take.
    std::vector<CollectiveCall> calls;
    for (const auto& g : sibling_groups(dp, c.gpus())) calls.push_back({Collective::AllReduce, S, g, 0.0});
    const auto results = ecmp->run(calls);
    double slowest = 0;
    for (const auto& r : results) slowest = std::max(slowest, r.seconds());
    const double fixed = ecmp->plan(Collective::AllReduce, S, dp).fixed_seconds;
    const double k = std::round((slowest - fixed) / (S / B));
    CHECK(k >= 2);  // 8 flows hashed onto 8 spines collide (all-distinct has probability 8!/8^8)
    CHECK(slowest - fixed == Approx(k * S / B).epsilon(0.01));
    CHECK(ecmp->collective(Collective::AllReduce, S, dp).seconds == Approx(slowest).epsilon(1e-9));
}

TEST_CASE("SimGrid network: a dragonfly's global link is shared by the flows that cross between groups",
          "[hardware][simgrid]") {
    // 4 single-GPU nodes, one per router, 2 routers per group: groups {r0, r1} and {r2, r3}. Each
    // router's uplink capacity is its one NIC's 50 GB/s: one local bundle r0-r1 and one global
    // bundle r0-r2 (the first router of each group holds the group's global link), 50 GB/s each.
    // GPU 0 -> GPU 2 crosses r0-r2; GPU 1 -> GPU 3 goes r1-r0-r2-r3 over the same global bundle.
    // Alone each takes S / B after its fixed part; together 2 S / B.
    const ClusterSpec c = cluster(4, 1, 1, ScaleOutTopology::Dragonfly);
    const auto net = make_simgrid_network(c, "ecmp");
    const double S = 100e6, B = 50e9 * 0.9;
    const CollectiveCall a{Collective::SendRecv, S, CommGroup::of({0, 2}), 0.0};
    const CollectiveCall b{Collective::SendRecv, S, CommGroup::of({1, 3}), 0.0};
    const double fixed_a = net->plan(Collective::SendRecv, S, a.group).fixed_seconds;
    const double fixed_b = net->plan(Collective::SendRecv, S, b.group).fixed_seconds;
    CHECK(net->run({a})[0].seconds() - fixed_a == Approx(S / B).epsilon(1e-3));
    const auto both = net->run({a, b});
    CHECK(both[0].seconds() - fixed_a == Approx(2 * S / B).epsilon(1e-3));
    CHECK(both[1].seconds() - fixed_b == Approx(2 * S / B).epsilon(1e-3));
}
