// The topology graph and its routing strategies, on hand-built clusters: vertex and link counts
// from each builder's rule, the fewest-hop paths, and how ECMP, D-mod-K and spraying pick.
#include "hardware/topology/topology.h"

#include "hardware/routing/routing.h"
#include "hardware/topology/builders.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>

using namespace fathom::hardware;

namespace {

ClusterSpec cluster(int nodes, int gpus_per_node, int nics, int nodes_per_leaf, ScaleOutTopology t,
                    double oversub = 1) {
    return fathom::testing::network_cluster(nodes, gpus_per_node, nodes_per_leaf, t, oversub, nics);
}

std::map<VertexKind, int> kinds(const Topology& t) {
    std::map<VertexKind, int> k;
    for (auto [v, end] = boost::vertices(t.graph()); v != end; ++v) ++k[t.vertex(*v).kind];
    return k;
}

double latency(const Topology& t, const Path& p) {
    const auto edges = t.edges_by_id();
    double s = 0;
    for (int l : p.links) s += t.link(edges[static_cast<size_t>(l)]).latency;
    return s;
}

}  // namespace

TEST_CASE("topology builders: vertices and links by each builder's rule", "[hardware][topology]") {
    SECTION("2 nodes x 8 GPUs, fat-tree-2, one node per leaf: 8 spines (8 downlinks / 1:1)") {
        const Topology t = build_topology(cluster(2, 8, 8, 1, ScaleOutTopology::FatTree2));
        auto k = kinds(t);
        CHECK(k[VertexKind::Gpu] == 16);
        CHECK(k[VertexKind::ScaleUpSwitch] == 2);
        CHECK(k[VertexKind::Nic] == 16);
        CHECK(k[VertexKind::Leaf] == 2);
        CHECK(k[VertexKind::Spine] == 8);
        // Directed: GPU-switch 16 x 2, GPU-NIC 16 x 2, NIC-leaf 16 x 2, leaf-spine 2 x 8 x 2.
        CHECK(t.links() == 32 + 32 + 32 + 32);
    }
    SECTION("oversubscription 4:1 leaves a quarter of the uplinks") {
        const Topology t = build_topology(cluster(4, 8, 8, 2, ScaleOutTopology::FatTree2, 4));
        CHECK(kinds(t)[VertexKind::Spine] == 4);  // 2 nodes x 8 NICs / 4
    }
    SECTION("rail-optimized: one leaf per rail per group of nodes, spines above") {
        const Topology t = build_topology(cluster(4, 8, 8, 2, ScaleOutTopology::RailOptimized));
        auto k = kinds(t);
        CHECK(k[VertexKind::Leaf] == 2 * 8);
        CHECK(k[VertexKind::Spine] == 2);  // 2 downlinks per rail leaf, 1:1
    }
    SECTION("fat-tree-3: pods of nodes_per_leaf leaves, aggregation and core tiers") {
        const Topology t = build_topology(cluster(8, 8, 8, 2, ScaleOutTopology::FatTree3));
        auto k = kinds(t);
        CHECK(k[VertexKind::Leaf] == 4);
        CHECK(k[VertexKind::Spine] == 2 * 16);  // 2 pods x 16 aggregation switches
        CHECK(k[VertexKind::Core] == 16 * 2);   // 16 groups x 2 cores
    }
    SECTION("dragonfly: groups of nodes_per_leaf routers, local bundles inside, one global bundle per group pair") {
        const Topology t = build_topology(cluster(8, 8, 8, 2, ScaleOutTopology::Dragonfly));
        auto k = kinds(t);
        CHECK(k[VertexKind::Leaf] == 4);  // routers of 2 nodes; 2 groups of 2 routers
        // Directed: GPU-switch 64 x 2, GPU-NIC 64 x 2, NIC-router 64 x 2; 2 local + 1 global bundle x 2.
        CHECK(t.links() == 128 + 128 + 128 + 3 * 2);
    }
    SECTION("a full mesh links every pair of a node's GPUs") {
        ClusterSpec c = cluster(1, 8, 8, 1, ScaleOutTopology::FatTree2);
        c.scale_up.topology = ScaleUpTopology::FullMesh;
        c.scale_up.link_bandwidth = 64e9;
        const Topology t = build_topology(c);
        CHECK(t.links() == 8 * 7);
        CHECK(t.scale_up_switch(0) == Topology::null_vertex());
    }
    SECTION("fewer NICs than GPUs: GPU i of a node uses NIC i x nics / gpus") {
        const Topology t = build_topology(cluster(2, 8, 4, 1, ScaleOutTopology::FatTree2));
        CHECK(t.nic_of(0) == t.nic_of(1));
        CHECK(t.nic_of(1) != t.nic_of(2));
        CHECK(t.vertex(t.nic_of(15)).index == 3);
    }
    SECTION("summary and DOT: one DOT edge per physical link") {
        const Topology t = build_topology(cluster(2, 8, 8, 1, ScaleOutTopology::FatTree2));
        CHECK(t.summary().find("spine: 8") != std::string::npos);
        std::ostringstream dot;
        t.write_dot(dot);
        const std::string s = dot.str();
        size_t edges = 0;
        for (size_t p = s.find(" -- "); p != std::string::npos; p = s.find(" -- ", p + 1)) ++edges;
        CHECK(edges == static_cast<size_t>(t.links() / 2));
        CHECK(s.rfind("graph fathom {", 0) == 0);
    }
}

TEST_CASE("topology validation: zero bandwidth and disconnected graphs are input errors", "[hardware][topology]") {
    ClusterSpec c = cluster(2, 8, 8, 1, ScaleOutTopology::FatTree2);
    c.nic.bandwidth = 0;
    CHECK_THROWS_WITH(build_topology(c, "x.yaml"), Catch::Contains("x.yaml") && Catch::Contains("no bandwidth"));
    Topology t;
    t.set_gpu(0, t.add_vertex(VertexKind::Gpu, "a", 0, 0));
    t.set_gpu(1, t.add_vertex(VertexKind::Gpu, "b", 1, 1));
    CHECK_THROWS_WITH(t.validate("y.yaml"), Catch::Contains("disconnected"));
    CHECK_THROWS_AS(topology_registry().get("torus"), fathom::sim::InputError);
    CHECK_THROWS_AS(routing_registry().get("valiant"), fathom::sim::InputError);
}

TEST_CASE("a graph past its bound is refused before it is built", "[hardware][topology]") {
    // The lower bound never exceeds what the builders build: 1, 2 and 8 nodes (one node has no
    // NICs) of 1, 2 and 8 GPUs (a full mesh of 2 has one link a GPU) under every scale-out topology
    // and both scale-up ones.
    for (auto topo : {ScaleOutTopology::FatTree2, ScaleOutTopology::FatTree3, ScaleOutTopology::RailOptimized,
                      ScaleOutTopology::Dragonfly})
        for (int nodes : {1, 2, 8})
            for (int gpus : {1, 2, 8})
                for (bool mesh : {false, true}) {
                    ClusterSpec c = cluster(nodes, gpus, gpus, 2, topo);
                    if (mesh) c.scale_up.topology = ScaleUpTopology::FullMesh;
                    const Topology t = build_topology(c);
                    INFO(fathom::sim::name(topo) << " " << nodes << " nodes of " << gpus << ", full mesh " << mesh);
                    CHECK(topology_elements_lower_bound(c) <= int64_t{t.vertices()} + t.links());
                }
    // A million nodes of 8 GPUs and 8 NICs: at least 8M x (3 + 2) + 8M x 3 = 64M elements,
    // refused at once naming the key.
    ClusterSpec c = cluster(1'000'000, 8, 8, 16, ScaleOutTopology::RailOptimized);
    CHECK(topology_elements_lower_bound(c) == 64'000'000);
    CHECK_THROWS_WITH(build_topology(c), Catch::Contains("key 'cluster.nodes'") &&
                                             Catch::Contains("at least 64000000 vertices and directed links"));
}

TEST_CASE("routing: fewest-hop paths, and how each strategy picks among them", "[hardware][routing]") {
    const Topology t = build_topology(cluster(2, 8, 8, 1, ScaleOutTopology::FatTree2));
    RouteCache cache(t);
    const auto ecmp = make_ecmp_routing();
    SECTION("inside a node: GPU - switch - GPU") {
        const auto p = ecmp->route(t, cache.toward(t.gpu(1)), t.gpu(0), 1);
        REQUIRE(p.size() == 1);
        CHECK(p[0].links.size() == 2);
    }
    SECTION("across leaves: GPU NIC leaf spine leaf NIC GPU, latency = NIC latency + 2 switch hops") {
        const auto p = ecmp->route(t, cache.toward(t.gpu(8)), t.gpu(0), 1);
        REQUIRE(p.size() == 1);
        CHECK(p[0].links.size() == 6);
        CHECK(latency(t, p[0]) == Approx(5e-6 + 2 * 1e-6));
    }
    SECTION("a shared NIC is not a path between the GPUs that share it") {
        const Topology s = build_topology(cluster(2, 8, 4, 1, ScaleOutTopology::FatTree2));
        RouteCache c2(s);
        const auto p = ecmp->route(s, c2.toward(s.gpu(1)), s.gpu(0), 1);
        REQUIRE(p.size() == 1);
        CHECK(s.vertex(boost::target(s.edges_by_id()[static_cast<size_t>(p[0].links[0])], s.graph())).kind ==
              VertexKind::ScaleUpSwitch);
    }
    SECTION("spray splits a flow evenly over the 8 spines") {
        const auto p = make_spray_routing()->route(t, cache.toward(t.gpu(8)), t.gpu(0), 1);
        REQUIRE(p.size() == 8);
        std::set<int> spine_links;
        for (const auto& x : p) {
            CHECK(x.share == Approx(1.0 / 8));
            spine_links.insert(x.links[2]);  // leaf -> spine
        }
        CHECK(spine_links.size() == 8);
    }
    SECTION("D-mod-K: destinations of consecutive index take consecutive spines; one destination one spine") {
        const auto dmodk = make_dmodk_routing();
        std::set<int> ups;
        for (int d = 8; d < 16; ++d) ups.insert(dmodk->route(t, cache.toward(t.gpu(d)), t.gpu(0), 1)[0].links[2]);
        CHECK(ups.size() == 8);
        // Static: the flow id plays no part.
        CHECK(dmodk->route(t, cache.toward(t.gpu(9)), t.gpu(0), 1)[0].links ==
              dmodk->route(t, cache.toward(t.gpu(9)), t.gpu(0), 99)[0].links);
    }
    SECTION("ECMP: the same flow id always takes the same path; different ids spread") {
        std::set<int> ups;
        for (uint64_t f = 0; f < 64; ++f) {
            const auto a = ecmp->route(t, cache.toward(t.gpu(8)), t.gpu(0), f);
            CHECK(a[0].links == ecmp->route(t, cache.toward(t.gpu(8)), t.gpu(0), f)[0].links);
            ups.insert(a[0].links[2]);
        }
        CHECK(ups.size() == 8);
    }
}
