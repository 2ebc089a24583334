// Scale-out builder "rail-optimized" (NVIDIA DGX SuperPOD): nodes in groups of nodes_per_leaf; in
// each group, NIC i of every node on the group's rail-i leaf; spines above joining every leaf, each
// leaf with downlinks / oversubscription uplinks (one per spine). Same-rail traffic between nodes
// of a group stays on one leaf; cross-rail traffic climbs to a spine unless NCCL's PXN first moves
// it over the scale-up fabric to the GPU on the right rail.
#include "hardware/topology/builders.h"

namespace fathom::hardware {

void build_rail_optimized(Topology& topo, const ClusterSpec& c) {
    using namespace topo_detail;
    const std::vector<Vertex> nics = add_nics(topo, c);
    const int groups = (c.nodes + c.nodes_per_leaf - 1) / c.nodes_per_leaf;
    const std::vector<Vertex> leaves = add_switches(topo, VertexKind::Leaf, "rail-leaf", groups * c.nics_per_node);
    for (int node = 0; node < c.nodes; ++node)
        for (int j = 0; j < c.nics_per_node; ++j)
            network_link(topo, nics[static_cast<size_t>(node * c.nics_per_node + j)],
                         leaves[static_cast<size_t>((node / c.nodes_per_leaf) * c.nics_per_node + j)], c, true);
    const std::vector<Vertex> spines =
        add_switches(topo, VertexKind::Spine, "spine", uplinks(c.nodes_per_leaf, c.oversubscription));
    for (Vertex leaf : leaves)
        for (Vertex spine : spines) network_link(topo, leaf, spine, c, false);
}

}  // namespace fathom::hardware
