#pragma once
// The cluster as a graph (Boost.Graph): accelerators, NICs, scale-up switches and network switches
// as vertices; every physical link as two directed edges, one per direction, each with its raw
// bandwidth, the calibrated fraction of it that collectives reach, and its latency. Built from a
// ClusterSpec by the builders of builders.h (one per file, registered by name), routed by the
// strategies of hardware/routing, and simulated flow by flow by the SimGrid network.
//
// The graph is the fabric as the flow-level network sees it: an NVSwitch domain is one switch
// vertex per node (the four NVSwitch chips of an HGX board act as one non-blocking crossbar), a
// NIC hangs off the accelerator that owns it (NCCL's GPU-NIC affinity), and switches are logical
// (a leaf of `nodes_per_leaf` nodes, whatever radix the real box has).
#include "hardware/spec.h"
#include "sim/enum_names.h"

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fathom::hardware {

enum class VertexKind { Gpu, Nic, ScaleUpSwitch, Leaf, Spine, Core };
constexpr auto enum_names(VertexKind) {
    return sim::name_table<VertexKind>({{VertexKind::Gpu, "gpu"},
                                        {VertexKind::Nic, "nic"},
                                        {VertexKind::ScaleUpSwitch, "scale-up switch"},
                                        {VertexKind::Leaf, "leaf"},
                                        {VertexKind::Spine, "spine"},
                                        {VertexKind::Core, "core"}});
}

struct TopoVertex {
    VertexKind kind = VertexKind::Gpu;
    std::string name;
    int node = -1;   // node of a GPU, NIC or scale-up switch; -1 for network switches
    int index = -1;  // GPU: global rank; NIC: local index in its node; switch: ordinal in its tier
};

// Which calibrated level a link belongs to (the collectives' achievable-bandwidth fractions are
// per level, see hardware/collectives/collective.h).
enum class LinkLevel { ScaleUp, Host, ScaleOut };

struct TopoLink {
    double bandwidth = 0;   // bytes/s, this direction, raw
    double efficiency = 1;  // achievable fraction in collectives (calibrated per fabric / NIC)
    double latency = 0;     // s
    LinkLevel level = LinkLevel::ScaleOut;
    int id = -1;  // dense edge index, 0..links()-1
    double capacity() const { return bandwidth * efficiency; }
};

using TopoGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, TopoVertex, TopoLink>;
using Vertex = TopoGraph::vertex_descriptor;
using Edge = TopoGraph::edge_descriptor;

class Topology {
public:
    // The most vertices plus directed links a graph may hold: 12M, about 2 GB and 5 s to build
    // (measured with `fathom topology`, DOT text included: 1.12M H100s of 8 a node under
    // rail-optimized leaves are 11.5M elements, 2.0 GB, 4.8 s; a dragonfly that grows past the
    // bound stops at 1.4 s and 1.5 GB). Past it, building stops with an InputError naming
    // cluster.nodes (a million nodes built for minutes and past 10 GB). The analytical network,
    // which builds no graph, has no such bound.
    static constexpr int64_t kMaxElements = 12'000'000;

    Vertex add_vertex(VertexKind kind, std::string name, int node, int index);
    // Both directions of one physical link.
    void connect(Vertex a, Vertex b, double bandwidth, double efficiency, double latency, LinkLevel level);

    const TopoGraph& graph() const { return g_; }
    const TopoVertex& vertex(Vertex v) const { return g_[v]; }
    const TopoLink& link(Edge e) const { return g_[e]; }
    int vertices() const { return static_cast<int>(boost::num_vertices(g_)); }
    int links() const { return static_cast<int>(boost::num_edges(g_)); }  // directed edges
    int gpus() const { return static_cast<int>(gpus_.size()); }
    Vertex gpu(int rank) const;
    // The NIC a GPU sends through (its own, or the one it shares); null_vertex() if the node has none.
    Vertex nic_of(int rank) const;
    Vertex scale_up_switch(int node) const;  // null_vertex() for a full mesh
    static Vertex null_vertex() { return TopoGraph::null_vertex(); }
    std::vector<Edge> edges_by_id() const;  // edge of each dense id

    // The builders' record of what they built, for the summary.
    std::string scale_up_builder, scale_out_builder;
    int gpus_per_node = 0;

    // InputError naming `where` when a link has no bandwidth or some GPU cannot reach another.
    void validate(const std::string& where) const;
    // Vertex counts by kind, links by level with their bandwidths, the builders used.
    std::string summary() const;
    void write_dot(std::ostream& os) const;

    // Builders register the special vertices as they create them.
    void set_gpu(int rank, Vertex v);
    void set_nic(int rank, Vertex v);
    void set_scale_up_switch(int node, Vertex v);

private:
    void count(int64_t added);  // InputError past kMaxElements
    TopoGraph g_;
    int64_t elements_ = 0;
    std::vector<Vertex> gpus_, nic_of_, switch_of_;
};

// The whole cluster: the scale-up builder for the fabric's topology ("nvswitch" or "full-mesh") on
// every node, then the scale-out builder named by the cluster's topology, then validate(). A
// cluster whose graph holds at least more than kMaxElements (its GPUs, NICs, and their links to
// the scale-up switch and the network, a lower bound) is refused before anything is built; one
// that passes that estimate and grows past it (a builder's quadratic tier) as it is built.
Topology build_topology(const ClusterSpec& cluster, const std::string& where = "cluster");
// At least what every builder adds: each GPU and NIC, a GPU's two directed links to its scale-up
// switch (a full mesh: its g - 1 to the others, so min(2, g - 1)), a GPU's two to its NIC, a NIC's
// (at least) two to the network.
int64_t topology_elements_lower_bound(const ClusterSpec& cluster);

}  // namespace fathom::hardware
