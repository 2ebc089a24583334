// Scale-out builder "fat-tree-2": leaves of nodes_per_leaf nodes, every NIC of a node on its
// node's leaf; when there is more than one leaf, spines above them. Each leaf has downlinks /
// oversubscription uplinks, one to each spine, all at the NIC bandwidth, so that with 1:1 a leaf's
// uplinks carry everything its NICs can send.
#include "hardware/topology/builders.h"

namespace fathom::hardware {

void build_fat_tree2(Topology& topo, const ClusterSpec& c) {
    using namespace topo_detail;
    const std::vector<Vertex> leaves = add_node_leaves(topo, c);
    if (leaves.size() < 2) return;
    const int up = uplinks(c.nodes_per_leaf * c.nics_per_node, c.oversubscription);
    const std::vector<Vertex> spines = add_switches(topo, VertexKind::Spine, "spine", up);
    for (Vertex leaf : leaves)
        for (Vertex spine : spines) network_link(topo, leaf, spine, c, false);
}

}  // namespace fathom::hardware
