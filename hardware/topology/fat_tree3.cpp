// Scale-out builder "fat-tree-3": leaves of nodes_per_leaf nodes as in fat-tree-2; pods of
// nodes_per_leaf leaves (the analytical model's pod of nodes_per_leaf^2 nodes), each pod with
// `u` aggregation switches (u = a leaf's uplinks after oversubscription) that every leaf of the
// pod links to; above them u groups of nodes_per_leaf core switches, aggregation switch a of every
// pod linking to each core of group a. Oversubscription is at the leaves only.
#include "hardware/topology/builders.h"

namespace fathom::hardware {

void build_fat_tree3(Topology& topo, const ClusterSpec& c) {
    using namespace topo_detail;
    const int per_pod = c.nodes_per_leaf;  // leaves per pod
    const std::vector<Vertex> leaves = add_node_leaves(topo, c);
    const int leaves_n = static_cast<int>(leaves.size());
    if (leaves_n < 2) return;
    const int up = uplinks(c.nodes_per_leaf * c.nics_per_node, c.oversubscription);
    const int pods = (leaves_n + per_pod - 1) / per_pod;
    const std::vector<Vertex> aggs = add_switches(topo, VertexKind::Spine, "agg", pods * up);
    for (int l = 0; l < leaves_n; ++l)
        for (int a = 0; a < up; ++a)
            network_link(topo, leaves[static_cast<size_t>(l)], aggs[static_cast<size_t>((l / per_pod) * up + a)], c,
                         false);
    if (pods < 2) return;
    const std::vector<Vertex> cores = add_switches(topo, VertexKind::Core, "core", up * per_pod);
    for (int p = 0; p < pods; ++p)
        for (int a = 0; a < up; ++a)
            for (int k = 0; k < per_pod; ++k)
                network_link(topo, aggs[static_cast<size_t>(p * up + a)], cores[static_cast<size_t>(a * per_pod + k)],
                             c, false);
}

}  // namespace fathom::hardware
