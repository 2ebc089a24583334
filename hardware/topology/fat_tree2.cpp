// Scale-out builder "fat-tree-2": leaves of nodes_per_leaf nodes, every NIC of a node on its
// node's leaf; when there is more than one leaf, spines above them. Each leaf has downlinks / 
// oversubscription uplinks, one to each spine, all at the NIC bandwidth, so that with 1:1 a leaf's
// uplinks carry everything its NICs can send.
#include "hardware/topology/builders.h"

namespace fathom::hardware {

void build_fat_tree2(Topology& topo, const ClusterSpec& c) {
    using namespace topo_detail;
    const std::vector<Vertex> nics = add_nics(topo, c);
    const int leaves_n = (c.nodes + c.nodes_per_leaf - 1) / c.nodes_per_leaf;
    const std::vector<Vertex> leaves = add_switches(topo, VertexKind::Leaf, "leaf", leaves_n);
    for (int node = 0; node < c.nodes; ++node)
        for (int j = 0; j < c.nics_per_node; ++j)
            network_link(topo, nics[static_cast<size_t>(node * c.nics_per_node + j)],
                         leaves[static_cast<size_t>(node / c.nodes_per_leaf)], c, true);
    if (leaves_n < 2) return;
    const int up = uplinks(c.nodes_per_leaf * c.nics_per_node, c.oversubscription);
    const std::vector<Vertex> spines = add_switches(topo, VertexKind::Spine, "spine", up);
    for (Vertex leaf : leaves)
        for (Vertex spine : spines) network_link(topo, leaf, spine, c, false);
}

}  // namespace fathom::hardware
