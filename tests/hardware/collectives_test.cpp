// Collective costs of the analytical network on a hand-built cluster (no catalog): each time is
// checked against the algorithm's closed form, written out with the cluster's numbers.
#include "hardware/collectives/collective.h"
#include "hardware/network/network_model.h"
#include "hardware/spec.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

using namespace fathom::hardware;

namespace {

// 16 nodes x 8 GPUs, switched scale-up without NVLS, one 400 Gb/s NIC per GPU, one leaf.
//   launch L                = 5 us
//   intra: B_intra          = 450 GB/s x 0.8 = 360 GB/s,   a_intra = 2 us per step
//   inter: B_inter per GPU  = 50 GB/s x 8 NICs / 8 GPUs x 0.9 = 45 GB/s,
//          a_inter          = NIC latency 5 us (one switch hop: no extra switch latency)
constexpr double kLaunch = 5e-6;
constexpr double kIntraBw = 450e9 * 0.8;
constexpr double kIntraLat = 2e-6;
constexpr double kInterBw = 50e9 * 8 / 8 * 0.9;
constexpr double kInterLat = 5e-6;

ClusterSpec test_cluster() {
    ClusterSpec c;
    c.accelerator.id = "test-gpu";
    c.accelerator.peak_flops[Dtype::bf16] = 1e15;
    c.accelerator.launch_overhead = kLaunch;
    c.nodes = 16;
    c.gpus_per_node = 8;
    c.scale_up.id = "test-fabric";
    c.scale_up.topology = ScaleUpTopology::Switched;
    c.scale_up.bandwidth_per_gpu = 450e9;
    c.scale_up.link_bandwidth = 450e9;
    c.scale_up.busbw_efficiency = 0.8;
    c.scale_up.step_latency = kIntraLat;
    c.scale_up.nvls = false;
    c.nic.id = "test-nic";
    c.nic.bandwidth = 50e9;
    c.nic.latency = kInterLat;
    c.nic.switch_latency = 1e-6;
    c.nic.efficiency = 0.9;
    c.nics_per_node = 8;
    c.nodes_per_leaf = 16;
    c.oversubscription = 1.0;
    return c;
}

constexpr double kGiB = 1073741824.0;

}  // namespace

TEST_CASE("ring all-reduce and all-gather inside one node", "[hardware][collectives]") {
    const auto net = make_analytical_network(test_cluster(), "ring");
    const CommGroup tp{8, 1};  // 8 consecutive GPUs: one node
    const double S = kGiB;
    const double n = 8;
    SECTION("all-reduce: L + 2(n-1) a + 2(n-1)/n S / B") {
        const double expected = kLaunch + 2 * (n - 1) * kIntraLat + 2 * (n - 1) / n * S / kIntraBw;
        const CollectiveCost c = net->collective(Collective::AllReduce, S, tp);
        CHECK(c.algorithm == "ring");
        CHECK(c.seconds == Approx(expected).epsilon(1e-12));
    }
    SECTION("all-gather and reduce-scatter: L + (n-1) a + (n-1)/n S / B") {
        const double expected = kLaunch + (n - 1) * kIntraLat + (n - 1) / n * S / kIntraBw;
        CHECK(net->collective(Collective::AllGather, S, tp).seconds == Approx(expected).epsilon(1e-12));
        CHECK(net->collective(Collective::ReduceScatter, S, tp).seconds == Approx(expected).epsilon(1e-12));
    }
    SECTION("a group of one, or zero bytes, costs nothing") {
        CHECK(net->collective(Collective::AllReduce, S, CommGroup{1, 1}).seconds == 0.0);
        CHECK(net->collective(Collective::AllReduce, 0.0, tp).seconds == 0.0);
    }
}

TEST_CASE("pipeline fill: a fraction of the bandwidth time until the chunks reach their largest size",
          "[hardware][collectives]") {
    // The test cluster with f = 0.45 and F = 43.2 MB of bus bytes, and NVLS (B_nvls = 480 GB/s,
    // start-up L_nvls = 17.8 us). Ring all-reduce in one node, W = 2(n-1)/n S = 1.75 S:
    //   S = 1 MiB:  W = 1,835,008 B; f W = 825,754 B < F, so fill = f W / B_intra
    //   S = 1 GiB:  f W = 845.6 MB > F, so fill = F / B_intra = 43.2e6 / 360e9 = 120 us
    // NVLS, same S: time = L + L_nvls + W / B_nvls + min(f W, F) / B_nvls. At 1 MiB NVLS takes
    // 5 + 17.8 + 3.823 + 1.720 = 28.34 us and the ring 5 + 14 x 2 + 5.097 + 2.294 = 40.39 us, so
    // NVLS is picked.
    ClusterSpec cluster = test_cluster();
    cluster.scale_up.fill_fraction = 0.45;
    cluster.scale_up.fill_max = 43.2e6;
    const double n = 8, f = 0.45, F = 43.2e6;
    const CommGroup tp{8, 1};
    for (const double S : {1048576.0, kGiB}) {
        const double W = 2 * (n - 1) / n * S;
        const double ring = kLaunch + 2 * (n - 1) * kIntraLat + W / kIntraBw + std::min(f * W, F) / kIntraBw;
        INFO("S = " << S);
        CHECK(make_analytical_network(cluster, "ring")->collective(Collective::AllReduce, S, tp).seconds ==
              Approx(ring).epsilon(1e-12));
        // All-gather: W = (n-1)/n S, (n-1) steps.
        const double Wg = (n - 1) / n * S;
        const double ag = kLaunch + (n - 1) * kIntraLat + Wg / kIntraBw + std::min(f * Wg, F) / kIntraBw;
        CHECK(make_analytical_network(cluster, "ring")->collective(Collective::AllGather, S, tp).seconds ==
              Approx(ag).epsilon(1e-12));
    }
    CHECK(make_analytical_network(cluster, "ring")->collective(Collective::AllReduce, kGiB, tp).seconds ==
          Approx(kLaunch + 14 * kIntraLat + 1.75 * kGiB / kIntraBw + 120e-6).epsilon(1e-9));

    cluster.scale_up.nvls = true;
    cluster.scale_up.nvls_busbw_efficiency = 480.0 / 450.0;
    cluster.scale_up.nvls_latency = 17.8e-6;
    const auto automatic = make_analytical_network(cluster);
    const double Bn = 480e9;
    const double W1 = 1.75 * 1048576.0;
    const CollectiveCost small = automatic->collective(Collective::AllReduce, 1048576.0, tp);
    CHECK(small.algorithm == "nvls");
    CHECK(small.seconds == Approx(kLaunch + 17.8e-6 + W1 / Bn + f * W1 / Bn).epsilon(1e-9));
    CHECK(small.seconds == Approx(28.34e-6).epsilon(1e-3));
    // The flow backend's fixed part holds the start-up and the fill; the flows carry W.
    const CollectivePlan plan = automatic->plan(Collective::AllReduce, kGiB, tp);
    CHECK(plan.algorithm == "nvls");
    CHECK(plan.fixed_seconds == Approx(kLaunch + 17.8e-6 + F / Bn).epsilon(1e-9));
    CHECK(plan.seconds - plan.fixed_seconds == Approx(1.75 * kGiB / Bn).epsilon(1e-9));
}
TEST_CASE("ring across nodes uses the slower level", "[hardware][collectives]") {
    // 32 ranks, stride 1: 4 nodes x 8 ranks. Ring bandwidth = min(B_intra, 8 x B_inter)
    // = min(360, 360) GB/s; step latency = max(a_intra, a_inter) = 5 us.
    const auto net = make_analytical_network(test_cluster(), "ring");
    const double S = kGiB, n = 32;
    const double bw = std::fmin(kIntraBw, 8 * kInterBw);
    const double expected = kLaunch + 2 * (n - 1) * kInterLat + 2 * (n - 1) / n * S / bw;
    CHECK(net->collective(Collective::AllReduce, S, CommGroup{32, 1}).seconds == Approx(expected).epsilon(1e-12));
}

TEST_CASE("a ring of one rank per node on full-mesh nodes runs on the NICs alone", "[hardware][collectives]") {
    // Full-mesh nodes (MI300X class): a group of g GPUs of a node uses its g - 1 direct links, so
    // a group holding one GPU of each node has no scale-up bandwidth at all; its ring crosses only
    // the NICs: bandwidth B_inter (50 GB/s x 0.9), 2 ranks on 2 nodes (stride 8). It used to take
    // min(0, B_inter) and no algorithm could price the all-gather (an internal error, found by a
    // plan search over the MI355X training case).
    ClusterSpec c = test_cluster();
    c.scale_up.topology = ScaleUpTopology::FullMesh;
    c.scale_up.link_bandwidth = 64e9;
    const auto net = make_analytical_network(c, "ring");
    const double S = kGiB, n = 2;
    const double expected = kLaunch + (n - 1) * kInterLat + (n - 1) / n * S / kInterBw;
    CHECK(net->collective(Collective::AllGather, S, CommGroup{2, 8}).seconds == Approx(expected).epsilon(1e-9));
}

TEST_CASE("hierarchical all-reduce across nodes", "[hardware][collectives]") {
    // 32 ranks = N 4 nodes x g 8 ranks. Phases pipelined: bandwidth term = the slower phase,
    // latencies add:
    //   intra_one = (g-1)/g S / B_intra,  inter_one = (N-1)/N (S/g) / B_inter
    //   time = L + 2(g-1) a_intra + 2 ceil(log2 N) a_inter + max(2 intra_one, 2 inter_one)
    const auto net = make_analytical_network(test_cluster(), "hierarchical");
    const double S = kGiB, g = 8, N = 4;
    const double intra_one = (g - 1) / g * S / kIntraBw;
    const double inter_one = (N - 1) / N * (S / g) / kInterBw;
    const double depth = 2;  // ceil(log2 4)
    const double expected =
        kLaunch + 2 * (g - 1) * kIntraLat + 2 * depth * kInterLat + std::fmax(2 * intra_one, 2 * inter_one);
    const CollectiveCost c = net->collective(Collective::AllReduce, S, CommGroup{32, 1});
    CHECK(c.algorithm == "hierarchical");
    CHECK(c.seconds == Approx(expected).epsilon(1e-12));

    SECTION("all-gather: L + (g-1) a_intra + (N-1) a_inter + max(intra_one, inter_one)") {
        const double ag = kLaunch + (g - 1) * kIntraLat + (N - 1) * kInterLat + std::fmax(intra_one, inter_one);
        CHECK(net->collective(Collective::AllGather, S, CommGroup{32, 1}).seconds == Approx(ag).epsilon(1e-12));
    }
}

TEST_CASE("the automatic choice is the fastest supporting algorithm", "[hardware][collectives]") {
    const ClusterSpec cluster = test_cluster();
    const auto automatic = make_analytical_network(cluster);
    for (const CommGroup& group : {CommGroup{8, 1}, CommGroup{32, 1}, CommGroup{16, 8}, CommGroup{64, 2}}) {
        for (const Collective op :
             {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll}) {
            for (const double bytes : {1e3, 1e6, 1e9}) {
                // Minimum over every algorithm forced in turn (a forced algorithm that does not
                // support the call falls back to the fastest: those answers are skipped). Ties
                // go to the first in registry order, as in the automatic choice.
                double best = std::numeric_limits<double>::infinity();
                std::string best_name;
                for (const auto& e : collective_registry().entries()) {
                    const CollectiveCost c = make_analytical_network(cluster, e.name)->collective(op, bytes, group);
                    if (c.algorithm != e.name) continue;
                    if (c.seconds < best) {
                        best = c.seconds;
                        best_name = e.name;
                    }
                }
                INFO(fathom::sim::name(op)
                     << " of " << bytes << " B over " << group.size << " ranks, stride " << group.stride);
                REQUIRE_FALSE(best_name.empty());
                const CollectiveCost chosen = automatic->collective(op, bytes, group);
                CHECK(chosen.seconds == best);
                CHECK(chosen.algorithm == best_name);
            }
        }
    }
}

TEST_CASE("an unknown forced algorithm is an input error listing the valid ones", "[hardware][collectives]") {
    CHECK_THROWS_WITH(make_analytical_network(test_cluster(), "butterfly"),
                      Catch::Contains("unknown collective algorithm 'butterfly'") && Catch::Contains("ring"));
}

TEST_CASE("group layout from size and stride on 8-GPU nodes", "[hardware][network]") {
    const auto net = make_analytical_network(test_cluster());
    SECTION("TP group: stride 1, size 8 -> one node of 8") {
        const GroupLayout l = net->layout(CommGroup{8, 1});
        CHECK(l.ranks == 8);
        CHECK(l.nodes == 1);
        CHECK(l.ranks_per_node == 8);
    }
    SECTION("DP group: stride 8, size 4 -> 4 nodes of 1 (one rank per node)") {
        const GroupLayout l = net->layout(CommGroup{4, 8});
        CHECK(l.ranks == 4);
        CHECK(l.nodes == 4);
        CHECK(l.ranks_per_node == 1);
    }
    SECTION("stride 4, size 4 -> 8 / 4 = 2 ranks per node, 4 / 2 = 2 nodes") {
        const GroupLayout l = net->layout(CommGroup{4, 4});
        CHECK(l.ranks == 4);
        CHECK(l.nodes == 2);
        CHECK(l.ranks_per_node == 2);
    }
    SECTION("stride 2, size 4 fits in one node (4 x 2 = 8 GPUs)") {
        const GroupLayout l = net->layout(CommGroup{4, 2});
        CHECK(l.nodes == 1);
        CHECK(l.ranks_per_node == 4);
    }
}

namespace {

// Bytes each member sends over all flows, and checks that flows stay inside the group.
std::vector<double> bytes_sent(const std::vector<Flow>& flows, int n) {
    std::vector<double> sent(static_cast<size_t>(n), 0.0);
    for (const auto& t : flows) {
        REQUIRE(t.src >= 0);
        REQUIRE(t.src < n);
        REQUIRE(t.dst >= 0);
        REQUIRE(t.dst < n);
        REQUIRE(t.src != t.dst);
        sent[static_cast<size_t>(t.src)] += t.bytes;
    }
    return sent;
}

CollectiveContext ctx_of(const GroupLayout& l) {
    CollectiveContext c;
    c.layout = l;
    c.intra.bandwidth = 300e9;
    c.inter.bandwidth = 40e9;
    c.nvls = true;
    c.nvls_bandwidth = 450e9;
    return c;
}

}  // namespace

TEST_CASE("collective algorithms list their flows", "[hardware][collectives]") {
    const double S = 1 << 20;
    GroupLayout one_node;  // 8 ranks in one node
    one_node.ranks = 8;
    one_node.ranks_per_node = 8;
    one_node.nodes = 1;
    GroupLayout four_nodes;  // 4 nodes x 8
    four_nodes.ranks = 32;
    four_nodes.ranks_per_node = 8;
    four_nodes.nodes = 4;
    const double n = 8;
    SECTION(
        "ring in one node: each rank sends 2(n-1)/n S (all-reduce), (n-1)/n S (all-gather), spread over its peers") {
        const auto ring = make_ring();
        const auto ar = ring->flows(Collective::AllReduce, S, ctx_of(one_node));
        CHECK(ar.size() == 8 * 7);
        // The numerator of the ring's bandwidth term.
        for (double b : bytes_sent(ar, 8)) CHECK(b == Approx(2 * (n - 1) / n * S));
        for (double b : bytes_sent(ring->flows(Collective::AllGather, S, ctx_of(one_node)), 8))
            CHECK(b == Approx((n - 1) / n * S));
    }
    SECTION("ring across nodes: one channel per rank of a node, each leaving every node by its own NIC") {
        const auto flows = make_ring()->flows(Collective::AllReduce, S, ctx_of(four_nodes));
        CHECK(flows.size() == 8 * 32);  // 8 channels x 32 ring edges
        const double nn = 32;
        for (double b : bytes_sent(flows, 32)) CHECK(b == Approx(2 * (nn - 1) / nn * S));
        // Per node, 8 flows leave it (one per channel), each through a different member's NIC,
        // each carrying 1/8 of a rank's bytes: the NICs share the ring's inter-node traffic.
        std::set<int> exits;
        for (const auto& f : flows)
            if (f.src / 8 == 0 && f.dst / 8 == 1) {
                exits.insert(f.via >= 0 ? f.via : f.src);
                CHECK(f.bytes == Approx(2 * (nn - 1) / nn * S / 8));
                CHECK((f.via >= 0 ? f.via : f.src) % 8 == f.dst % 8);  // same rail on both ends
            }
        CHECK(exits.size() == 8);
    }
    SECTION("pairwise all-to-all: every rank sends S/n to every other rank, via the receiver's rail") {
        const auto flows = make_pairwise()->flows(Collective::AllToAll, S, ctx_of(four_nodes));
        std::set<std::pair<int, int>> pairs;
        for (const auto& t : flows) {
            CHECK(t.bytes == S / 32);
            pairs.insert({t.src, t.dst});
            if (t.src / 8 != t.dst / 8) CHECK((t.via >= 0 ? t.via : t.src) % 8 == t.dst % 8);
        }
        CHECK(pairs.size() == 32 * 31);
    }
    SECTION("hierarchical all-reduce: 2(g-1)/g S inside nodes and 2(N-1)/N S/g across, concurrently") {
        auto ctx = ctx_of(four_nodes);
        ctx.nvls = false;
        const auto flows = make_hierarchical()->flows(Collective::AllReduce, S, ctx);
        const double g = 8, N = 4;
        for (double b : bytes_sent(flows, 32)) CHECK(b == Approx(2 * (g - 1) / g * S + 2 * (N - 1) / N * S / g));
        for (const auto& t : flows)
            if (t.src / 8 != t.dst / 8) CHECK(t.src % 8 == t.dst % 8);  // inter-node rings join equal local indices
    }
    SECTION("tree all-reduce loads links as the ring does (its bandwidth term is the ring's)") {
        const double nn = 32;
        for (double b : bytes_sent(make_tree()->flows(Collective::AllReduce, S, ctx_of(four_nodes)), 32))
            CHECK(b == Approx(2 * (nn - 1) / nn * S));
    }
    SECTION("send/recv is one flow; NVLS is ring traffic scaled by intra / NVLS bandwidth") {
        const auto d = make_direct()->flows(Collective::SendRecv, S, ctx_of(one_node));
        REQUIRE(d.size() == 1);
        CHECK(d[0].src == 0);
        CHECK(d[0].dst == 1);
        CHECK(d[0].bytes == S);
        // 2 (n-1)/n S x 300 / 450: on 300 GB/s links it takes 2 (n-1)/n S / 450 GB/s, the NVLS time.
        for (double b : bytes_sent(make_nvls()->flows(Collective::AllReduce, S, ctx_of(one_node)), 8))
            CHECK(b == Approx(2 * (n - 1) / n * S * 300.0 / 450.0));
    }
    SECTION("the fixed part of each time is time() with no bytes") {
        const auto c = ctx_of(four_nodes);
        for (const auto& e : collective_registry().entries()) {
            const auto algo = e.factory();
            if (!algo->supports(Collective::AllReduce, c)) continue;
            CHECK(algo->time(Collective::AllReduce, 0, c) <= algo->time(Collective::AllReduce, S, c));
        }
    }
}

TEST_CASE("groups with an offset or explicit members: layouts and global ranks", "[hardware][network]") {
    const auto net = make_analytical_network(test_cluster());  // 16 nodes x 8 GPUs
    SECTION("an aligned strided group keeps the closed form") {
        const GroupLayout l = net->layout(CommGroup{16, 4});  // ranks 0, 4, ..., 60: 2 per node
        CHECK(l.ranks_per_node == 2);
        CHECK(l.nodes == 8);
    }
    SECTION("a group straddling a node boundary is counted member by member") {
        const GroupLayout l = net->layout(CommGroup{4, 1, 6});  // ranks 6, 7 | 8, 9
        CHECK(l.nodes == 2);
        CHECK(l.ranks_per_node == 2);
    }
    SECTION("explicit members: a KV-cache transfer between GPU 3 and GPU 42") {
        const CommGroup pair = CommGroup::of({3, 42});
        const GroupLayout l = net->layout(pair);
        CHECK(l.ranks == 2);
        CHECK(l.nodes == 2);
        const auto plan = net->plan(Collective::SendRecv, 1e6, pair);
        REQUIRE(plan.flows.size() == 1);
        CHECK(plan.flows[0].src == 3);
        CHECK(plan.flows[0].dst == 42);
        // Costs like any inter-node send: L + a_inter + S / B_inter.
        CHECK(net->collective(Collective::SendRecv, 1e6, pair).seconds == Approx(kLaunch + kInterLat + 1e6 / kInterBw));
    }
    SECTION("plans map member indices to global ranks") {
        const auto plan = net->plan(Collective::AllGather, 1e6, CommGroup{4, 8, 2});  // ranks 2, 10, 18, 26
        REQUIRE(!plan.flows.empty());
        std::set<int> ranks;
        for (const auto& t : plan.flows) ranks.insert(t.src);
        CHECK(ranks == std::set<int>{2, 10, 18, 26});
        CHECK(plan.fixed_seconds < plan.seconds);
    }
    SECTION("sibling groups tile the cluster") {
        const auto dp = sibling_groups(CommGroup{16, 8, 3}, 128);  // one rank per node, local index 3
        CHECK(dp.size() == 8);
        CHECK(dp.front().offset == 3);
        std::set<int> all;
        for (const auto& g : dp)
            for (int i = 0; i < g.count(); ++i) all.insert(g.rank(i));
        CHECK(all.size() == 128);
        CHECK(sibling_groups(CommGroup{8, 1}, 128).size() == 16);
        CHECK(sibling_groups(CommGroup::of({3, 42}), 128).size() == 1);
    }
}

TEST_CASE("a serving engine's peer all-reduce: latency + rank latency x n + bus bytes / its bandwidth, one node",
          "[hardware][collectives]") {
    // The test fabric with nvlink4-nvswitch's fitted custom all-reduce: 2.85 us + 0.379 us x n +
    // 2(n-1)/n S / 229.6 GB/s, up to 8 MiB. 8 ranks, 1 MiB: 2.85 + 3.032 + 1.75 x 1048576 / 229.6e9
    // = 5.882 + 7.992 = 13.87 us, where the ring takes 5 + 14 x 2 + 1.75 x 1 MiB / 360 GB/s = 38.1 us.
    ClusterSpec c = test_cluster();
    c.scale_up.peer_allreduce_latency = 2.85e-6;
    c.scale_up.peer_allreduce_rank_latency = 0.379e-6;
    c.scale_up.peer_allreduce_bandwidth = 229.6e9;
    c.scale_up.peer_allreduce_max_bytes = 8.0 * 1024 * 1024;
    const CommGroup tp{8, 1};
    const double S = 1048576;
    // Training (no engine kernel): NCCL's algorithms only.
    CHECK(make_analytical_network(c, "")->collective(Collective::AllReduce, S, tp).algorithm != "peer");
    c.peer_allreduce = true;
    const auto net = make_analytical_network(c, "");
    const CollectiveCost p = net->collective(Collective::AllReduce, S, tp);
    CHECK(p.algorithm == "peer");
    CHECK(p.seconds == Approx(2.85e-6 + 8 * 0.379e-6 + 1.75 * S / 229.6e9).epsilon(1e-12));
    CHECK(p.seconds == Approx(13.87e-6).epsilon(1e-3));
    // Above the size limit the engines hand the all-reduce to NCCL.
    CHECK(net->collective(Collective::AllReduce, 16.0 * 1024 * 1024, tp).algorithm != "peer");
    // Across nodes (16 ranks over 2 nodes) it does not apply; nor to other collectives.
    CHECK(net->collective(Collective::AllReduce, S, CommGroup{16, 1}).algorithm != "peer");
    CHECK(net->collective(Collective::AllGather, S, tp).algorithm != "peer");
}
