#pragma once
// Topology builders, one per file, registered by name. A scale-up builder adds every node's
// accelerators and their fabric; a scale-out builder adds the NICs and the network above them.
#include "hardware/topology/topology.h"
#include "sim/registry.h"

#include <string>

namespace fathom::hardware {

using TopologyBuilder = void (*)(Topology& topo, const ClusterSpec& cluster);
using TopologyRegistry = sim::Registry<TopologyBuilder>;

// nvswitch, full-mesh (scale-up); fat-tree-2, fat-tree-3, rail-optimized, dragonfly (scale-out).
const TopologyRegistry& topology_registry();

void build_nvswitch(Topology& topo, const ClusterSpec& cluster);
void build_full_mesh(Topology& topo, const ClusterSpec& cluster);
void build_fat_tree2(Topology& topo, const ClusterSpec& cluster);
void build_fat_tree3(Topology& topo, const ClusterSpec& cluster);
void build_rail_optimized(Topology& topo, const ClusterSpec& cluster);
void build_dragonfly(Topology& topo, const ClusterSpec& cluster);

namespace topo_detail {
// The NICs of every node, each linked to the accelerators that send through it (GPU i of a node
// uses NIC i x nics / gpus), over a host link of the PCIe bandwidth. Returns NIC vertices,
// node-major.
std::vector<Vertex> add_nics(Topology& topo, const ClusterSpec& cluster);
// Switches of one tier, named prefix0, prefix1, ...
std::vector<Vertex> add_switches(Topology& topo, VertexKind kind, const std::string& prefix, int count);
// The NICs (add_nics) under leaves of nodes_per_leaf nodes each, every NIC of a node on its node's
// leaf (the fat-trees' lowest tier). Returns the leaves.
std::vector<Vertex> add_node_leaves(Topology& topo, const ClusterSpec& cluster);
// Uplinks per leaf: its downlinks divided by the oversubscription, at least one.
int uplinks(int downlinks, double oversubscription);
// One scale-out link (NIC bandwidth and efficiency) between two switches or a NIC and a switch.
void network_link(Topology& topo, Vertex a, Vertex b, const ClusterSpec& c, bool nic_hop);
}  // namespace topo_detail

}  // namespace fathom::hardware
