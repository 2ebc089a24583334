// Scale-out builder "dragonfly" (Kim et al., ISCA 2008; HPE Slingshot): routers of nodes_per_leaf
// nodes (every NIC of a node on its router), groups of nodes_per_leaf routers fully connected by
// local links, and a global link between every pair of groups. Global link k of group g (k over
// the other groups in order) sits on router k mod a of the group, a the routers per group.
//
// Links are bundles: a router's uplink capacity (its NIC downlinks / oversubscription, as a fat-
// tree leaf's) is split evenly over its a-1 local bundles, and again over its global bundles, so
// an all-to-all across groups is bounded by the global bundles, as in the real topology. Routing is
// minimal (the fewest-hop paths: local, global, local); Valiant's non-minimal routing is not
// modelled.
#include "hardware/topology/builders.h"

#include <cmath>

namespace fathom::hardware {

void build_dragonfly(Topology& topo, const ClusterSpec& c) {
    using namespace topo_detail;
    const std::vector<Vertex> routers = add_node_leaves(topo, c);
    const int n = static_cast<int>(routers.size());
    if (n < 2) return;
    const int a = std::max(2, std::min(c.nodes_per_leaf, n));  // routers per group
    const int groups = (n + a - 1) / a;
    const double uplink = uplinks(c.nodes_per_leaf * c.nics_per_node, c.oversubscription) * c.nic.bandwidth;
    auto bundle = [&](Vertex x, Vertex y, double bandwidth) {
        topo.connect(x, y, bandwidth, c.nic.efficiency, c.nic.switch_latency, LinkLevel::ScaleOut);
    };
    for (int g = 0; g < groups; ++g) {
        const int first = g * a, last = std::min(n, first + a);
        for (int i = first; i < last; ++i)
            for (int j = i + 1; j < last; ++j)
                bundle(routers[static_cast<size_t>(i)], routers[static_cast<size_t>(j)], uplink / (a - 1));
    }
    if (groups < 2) return;
    const int per_router = (groups - 1 + a - 1) / a;  // global bundles per router, at most
    // The router of group g that holds its global link to group h (the last group may be short).
    auto holder = [&](int g, int h) {
        const int k = h < g ? h : h - 1;  // h's place among g's peers
        const int size = std::min(a, n - g * a);
        return g * a + k % size;
    };
    for (int g = 0; g < groups; ++g)
        for (int h = g + 1; h < groups; ++h)
            bundle(routers[static_cast<size_t>(holder(g, h))], routers[static_cast<size_t>(holder(h, g))],
                   uplink / per_router);
}

}  // namespace fathom::hardware
