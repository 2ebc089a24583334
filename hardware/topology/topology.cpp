#include "hardware/topology/topology.h"

#include "hardware/topology/builders.h"
#include "sim/error.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/graphviz.hpp>

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

namespace fathom::hardware {

namespace {

// `what` the graph holds: "at least N vertices and directed links" or "more than N ...".
[[noreturn]] void too_large(const std::string& what) {
    throw sim::InputError("the cluster's graph would hold " + what +
                              " vertices and directed links, past the most that `topology` and the simgrid "
                              "network build (" +
                              std::to_string(Topology::kMaxElements) +
                              ", about 200 bytes each); the analytical network (cluster.network: analytical) "
                              "builds no graph",
                          "", 0, "cluster.nodes");
}

}  // namespace

int64_t topology_elements_lower_bound(const ClusterSpec& c) {
    const int64_t gpus = int64_t{c.nodes} * c.gpus_per_node;
    const int64_t nics = c.nodes > 1 ? int64_t{c.nodes} * c.nics_per_node : 0;
    return gpus * std::min(3, c.gpus_per_node) + (nics > 0 ? 2 * gpus + 3 * nics : 0);
}

void Topology::count(int64_t added) {
    elements_ += added;
    if (elements_ > kMaxElements) too_large("more than " + std::to_string(kMaxElements));
}

Vertex Topology::add_vertex(VertexKind kind, std::string name, int node, int index) {
    count(1);
    return boost::add_vertex(TopoVertex{kind, std::move(name), node, index}, g_);
}

void Topology::connect(Vertex a, Vertex b, double bandwidth, double efficiency, double latency, LinkLevel level) {
    count(2);
    const int n = links();
    boost::add_edge(a, b, TopoLink{bandwidth, efficiency, latency, level, n}, g_);
    boost::add_edge(b, a, TopoLink{bandwidth, efficiency, latency, level, n + 1}, g_);
}

Vertex Topology::gpu(int rank) const {
    FATHOM_CHECK(rank >= 0 && rank < gpus(), "GPU rank " + std::to_string(rank) + " outside the topology");
    return gpus_[static_cast<size_t>(rank)];
}
Vertex Topology::nic_of(int rank) const {
    gpu(rank);
    return static_cast<size_t>(rank) < nic_of_.size() ? nic_of_[static_cast<size_t>(rank)] : null_vertex();
}
Vertex Topology::scale_up_switch(int node) const {
    return node >= 0 && static_cast<size_t>(node) < switch_of_.size() ? switch_of_[static_cast<size_t>(node)]
                                                                      : null_vertex();
}

namespace {
template <typename V>
void put(std::vector<V>& v, int i, V x, V fill) {
    if (v.size() <= static_cast<size_t>(i)) v.resize(static_cast<size_t>(i) + 1, fill);
    v[static_cast<size_t>(i)] = x;
}
}  // namespace

void Topology::set_gpu(int rank, Vertex v) { put(gpus_, rank, v, null_vertex()); }
void Topology::set_nic(int rank, Vertex v) { put(nic_of_, rank, v, null_vertex()); }
void Topology::set_scale_up_switch(int node, Vertex v) { put(switch_of_, node, v, null_vertex()); }

std::vector<Edge> Topology::edges_by_id() const {
    std::vector<Edge> out(static_cast<size_t>(links()));
    for (auto [e, end] = boost::edges(g_); e != end; ++e) out[static_cast<size_t>(g_[*e].id)] = *e;
    return out;
}

void Topology::validate(const std::string& where) const {
    for (auto [e, end] = boost::edges(g_); e != end; ++e) {
        const TopoLink& l = g_[*e];
        if (!(l.bandwidth > 0) || !(l.efficiency > 0))
            throw sim::InputError(where + ": link " + g_[boost::source(*e, g_)].name + " -> " +
                                  g_[boost::target(*e, g_)].name +
                                  " has no bandwidth (check the fabric and NIC catalog entries)");
    }
    if (gpus_.empty()) throw sim::InputError(where + ": the topology has no accelerators");
    // Every link is built in both directions, so reaching every GPU from the first one is connectivity.
    std::vector<boost::default_color_type> color(boost::num_vertices(g_));
    boost::breadth_first_search(
        g_, gpus_.front(),
        boost::color_map(boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g_))));
    for (size_t r = 0; r < gpus_.size(); ++r)
        if (color[gpus_[r]] != boost::black_color)
            throw sim::InputError(where + ": the topology is disconnected: GPU " + std::to_string(r) +
                                  " cannot reach GPU 0");
}

std::string Topology::summary() const {
    std::map<VertexKind, int> kinds;
    for (auto [v, end] = boost::vertices(g_); v != end; ++v) ++kinds[g_[*v].kind];
    struct Tally {
        int links = 0;
        double min_bw = 0, max_bw = 0;
    };
    std::map<LinkLevel, Tally> levels;
    for (auto [e, end] = boost::edges(g_); e != end; ++e) {
        const TopoLink& l = g_[*e];
        Tally& t = levels[l.level];
        t.min_bw = t.links ? std::min(t.min_bw, l.bandwidth) : l.bandwidth;
        t.max_bw = t.links ? std::max(t.max_bw, l.bandwidth) : l.bandwidth;
        ++t.links;
    }
    std::ostringstream os;
    os << "topology: " << scale_up_builder << " nodes";
    if (!scale_out_builder.empty()) os << " under " << scale_out_builder;
    os << "\nvertices: " << vertices();
    for (const auto& [k, n] : kinds) os << "\n  " << sim::name(k) << ": " << n;
    os << "\nlinks (directed): " << links();
    for (const auto& [lvl, t] : levels) {
        const char* name = lvl == LinkLevel::ScaleUp ? "scale-up"
                           : lvl == LinkLevel::Host  ? "host (GPU-NIC)"
                                                     : "scale-out";
        os << "\n  " << name << ": " << t.links << ", " << t.min_bw / 1e9;
        if (t.max_bw != t.min_bw) os << " to " << t.max_bw / 1e9;
        os << " GB/s per direction";
    }
    os << "\n";
    return os.str();
}

void Topology::write_dot(std::ostream& os) const {
    // One undirected DOT edge per physical link (the even id of its two directions).
    os << "graph fathom {\n  node [shape=box];\n";
    for (auto [v, end] = boost::vertices(g_); v != end; ++v) {
        const TopoVertex& x = g_[*v];
        const char* shape = x.kind == VertexKind::Gpu ? "box" : x.kind == VertexKind::Nic ? "ellipse" : "diamond";
        os << "  v" << *v << " [label=\"" << x.name << "\", shape=" << shape << "];\n";
    }
    for (auto [e, end] = boost::edges(g_); e != end; ++e) {
        const TopoLink& l = g_[*e];
        if (l.id % 2) continue;
        os << "  v" << boost::source(*e, g_) << " -- v" << boost::target(*e, g_) << " [label=\"" << l.bandwidth / 1e9
           << " GB/s\"];\n";
    }
    os << "}\n";
}

Topology build_topology(const ClusterSpec& cluster, const std::string& where) {
    if (const int64_t least = topology_elements_lower_bound(cluster); least > Topology::kMaxElements)
        too_large("at least " + std::to_string(least));
    Topology t;
    t.gpus_per_node = cluster.gpus_per_node;
    t.scale_up_builder = cluster.scale_up.topology == ScaleUpTopology::FullMesh ? "full-mesh" : "nvswitch";
    topology_registry().get(t.scale_up_builder).factory(t, cluster);
    if (cluster.nodes > 1) {
        t.scale_out_builder = sim::name(cluster.topology);
        topology_registry().get(t.scale_out_builder).factory(t, cluster);
    }
    t.validate(where);
    return t;
}

}  // namespace fathom::hardware
