#include "hardware/topology/builders.h"

#include <algorithm>
#include <cmath>

namespace fathom::hardware {

const TopologyRegistry& topology_registry() {
    static const TopologyRegistry registry = [] {
        TopologyRegistry r("topology");
        r.add("nvswitch", "scale-up: every node's GPUs on one non-blocking switch (HGX/DGX NVSwitch, Ascend HCCS)",
              &build_nvswitch);
        r.add("full-mesh", "scale-up: a direct link between every pair of a node's GPUs (MI300X xGMI)",
              &build_full_mesh);
        r.add("fat-tree-2", "scale-out: leaves of nodes_per_leaf nodes (all NICs of a node on one leaf), spines above",
              &build_fat_tree2);
        r.add("fat-tree-3", "scale-out: leaves, pods of nodes_per_leaf leaves with aggregation switches, a core tier",
              &build_fat_tree3);
        r.add("dragonfly",
              "scale-out: routers of nodes_per_leaf nodes, groups of nodes_per_leaf routers joined all-to-all, "
              "global links between every pair of groups",
              &build_dragonfly);
        r.add("rail-optimized", "scale-out: NIC i of every node of a group on rail leaf i, spines joining all leaves",
              &build_rail_optimized);
        return r;
    }();
    return registry;
}

namespace topo_detail {

std::vector<Vertex> add_nics(Topology& topo, const ClusterSpec& c) {
    std::vector<Vertex> nics;
    const double host_bw = c.pcie.bandwidth > 0 ? c.pcie.bandwidth : c.nic.bandwidth;
    for (int node = 0; node < c.nodes; ++node) {
        for (int j = 0; j < c.nics_per_node; ++j)
            nics.push_back(
                topo.add_vertex(VertexKind::Nic, "n" + std::to_string(node) + ".nic" + std::to_string(j), node, j));
        for (int i = 0; i < c.gpus_per_node; ++i) {
            const int rank = node * c.gpus_per_node + i;
            const int j = static_cast<int>(static_cast<long long>(i) * c.nics_per_node / c.gpus_per_node);
            const Vertex nic = nics[static_cast<size_t>(node * c.nics_per_node + j)];
            topo.connect(topo.gpu(rank), nic, host_bw, 1.0, 0.0, LinkLevel::Host);
            topo.set_nic(rank, nic);
        }
    }
    return nics;
}

std::vector<Vertex> add_switches(Topology& topo, VertexKind kind, const std::string& prefix, int count) {
    std::vector<Vertex> out;
    for (int i = 0; i < count; ++i) out.push_back(topo.add_vertex(kind, prefix + std::to_string(i), -1, i));
    return out;
}

std::vector<Vertex> add_node_leaves(Topology& topo, const ClusterSpec& c) {
    const std::vector<Vertex> nics = add_nics(topo, c);
    const std::vector<Vertex> leaves =
        add_switches(topo, VertexKind::Leaf, "leaf", (c.nodes + c.nodes_per_leaf - 1) / c.nodes_per_leaf);
    for (int node = 0; node < c.nodes; ++node)
        for (int j = 0; j < c.nics_per_node; ++j)
            network_link(topo, nics[static_cast<size_t>(node * c.nics_per_node + j)],
                         leaves[static_cast<size_t>(node / c.nodes_per_leaf)], c, true);
    return leaves;
}

int uplinks(int downlinks, double oversubscription) {
    return std::max(1, static_cast<int>(std::ceil(downlinks / std::max(1.0, oversubscription) - 1e-9)));
}

void network_link(Topology& topo, Vertex a, Vertex b, const ClusterSpec& c, bool nic_hop) {
    // Latencies add up to the analytical model's: NIC to NIC through one switch = nic.latency (two
    // NIC hops of half of it), each further switch hop switch_latency.
    topo.connect(a, b, c.nic.bandwidth, c.nic.efficiency, nic_hop ? c.nic.latency / 2 : c.nic.switch_latency,
                 LinkLevel::ScaleOut);
}

}  // namespace topo_detail
}  // namespace fathom::hardware
