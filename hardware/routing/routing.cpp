#include "hardware/routing/routing.h"

#include "sim/error.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace fathom::hardware {

const RoutingRegistry& routing_registry() {
    static const RoutingRegistry registry = [] {
        RoutingRegistry r("routing");
        r.add("ecmp", "equal-cost multi-path: each flow hashed onto one of the fewest-hop paths", &make_ecmp_routing);
        r.add("spray", "packet spraying: each flow split evenly over the fewest-hop paths", &make_spray_routing);
        r.add("dmodk", "static D-mod-K: the up-port at each tier chosen from the destination's index",
              &make_dmodk_routing);
        r.add("shortest-path", "one fixed fewest-hop path per pair (lowest vertex id at every hop)",
              &make_shortest_path_routing);
        return r;
    }();
    return registry;
}

// Transit rules: a GPU is never passed through; a NIC only between its host link and the network
// (a NIC shared by two GPUs is not a path between them: that is the scale-up fabric's job).

NextHops::NextHops(const Topology& topo, Vertex dst) : topo_(&topo), dst_(dst) {
    const TopoGraph& g = topo.graph();
    dist_.assign(boost::num_vertices(g), std::numeric_limits<int>::max());
    host_side_.assign(boost::num_vertices(g), false);
    dist_[dst] = 0;
    std::deque<Vertex> queue{dst};
    while (!queue.empty()) {
        const Vertex v = queue.front();
        queue.pop_front();
        if (v != dst && g[v].kind == VertexKind::Gpu) continue;
        for (auto [e, end] = boost::in_edges(v, g); e != end; ++e) {
            const Vertex u = boost::source(*e, g);
            if (dist_[u] != std::numeric_limits<int>::max()) continue;
            if (g[v].kind == VertexKind::Nic && g[u].kind == VertexKind::Gpu && host_side_[v]) continue;
            dist_[u] = dist_[v] + 1;
            host_side_[u] = g[u].kind == VertexKind::Nic && v == dst;
            queue.push_back(u);
        }
    }
}

std::vector<Edge> NextHops::from(Vertex at) const {
    const TopoGraph& g = topo_->graph();
    if (dist_[at] == std::numeric_limits<int>::max())
        throw sim::InputError("no route from " + g[at].name + " to " + g[dst_].name);
    std::vector<Edge> out;
    for (auto [e, end] = boost::out_edges(at, g); e != end; ++e) {
        const Vertex w = boost::target(*e, g);
        if (dist_[w] != dist_[at] - 1 || (w != dst_ && g[w].kind == VertexKind::Gpu)) continue;
        if (host_side_[w] && g[at].kind == VertexKind::Gpu) continue;
        out.push_back(*e);
    }
    std::sort(out.begin(), out.end(), [&](Edge a, Edge b) { return boost::target(a, g) < boost::target(b, g); });
    return out;
}

const NextHops& RouteCache::toward(Vertex dst) {
    auto& slot = cache_[dst];
    if (!slot) {
        if (cache_.size() > 4096) {  // bound the memory: a DP ring over 16k GPUs has 16k destinations
            cache_.clear();
            return *(cache_[dst] = std::make_unique<NextHops>(*topo_, dst));
        }
        slot = std::make_unique<NextHops>(*topo_, dst);
    }
    return *slot;
}

}  // namespace fathom::hardware
