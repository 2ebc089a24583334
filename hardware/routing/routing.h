#pragma once
// Routing strategies over a Topology, one per file, registered by name: which links a flow from
// one vertex to another crosses. All of them choose among the equal-cost (fewest-hop) paths that
// do not pass through an accelerator (a GPU is never transit, a NIC only between its host link and
// the network); they differ in
// how they pick:
//   shortest-path  the first candidate at every hop (lowest vertex id): one fixed path per pair
//   dmodk          static destination-mod-k: the up-port at each tier from the destination's index
//   ecmp           per-flow hash: the next hop from a hash of the flow id and the hop
//   spray          packet spraying: the flow split evenly over the equal-cost paths
#include "hardware/topology/topology.h"
#include "sim/registry.h"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace fathom::hardware {

struct Path {
    std::vector<int> links;  // dense link ids (TopoLink::id), in order
    double share = 1;        // fraction of the flow's bytes on this path
};

// Equal-cost next hops toward one destination, from a breadth-first search backwards from it.
class NextHops {
public:
    NextHops(const Topology& topo, Vertex dst);
    // Out-edges of `at` that lie on a fewest-hop path to the destination, by ascending target id.
    std::vector<Edge> from(Vertex at) const;
    Vertex destination() const { return dst_; }

private:
    const Topology* topo_;
    Vertex dst_;
    std::vector<int> dist_;
    std::vector<bool> host_side_;  // a NIC one host link from the destination
};

class RoutingStrategy {
public:
    virtual ~RoutingStrategy() = default;
    // The paths of one flow `flow` (an id that stays the same for the flow, as a 5-tuple would)
    // from src to the destination of `hops`; shares sum to 1. Empty when src is it. InputError when
    // it is unreachable. `dst_index`: the index D-mod-K routes by, when `hops` leads to the final
    // destination's leaf rather than to the destination itself (-1: the destination's own index).
    virtual std::vector<Path> route(const Topology& topo, const NextHops& hops, Vertex src, uint64_t flow,
                                    int64_t dst_index = -1) const = 0;
};

using RoutingFactory = std::unique_ptr<RoutingStrategy> (*)();
using RoutingRegistry = sim::Registry<RoutingFactory>;
const RoutingRegistry& routing_registry();

std::unique_ptr<RoutingStrategy> make_shortest_path_routing();
std::unique_ptr<RoutingStrategy> make_dmodk_routing();
std::unique_ptr<RoutingStrategy> make_ecmp_routing();
std::unique_ptr<RoutingStrategy> make_spray_routing();

// Follows one candidate per hop, chosen by pick(hop, candidates): the single-path strategies.
template <typename Pick>
std::vector<Path> follow(const Topology& topo, const NextHops& hops, Vertex src, Pick pick) {
    Path p;
    Vertex at = src;
    for (int hop = 0; at != hops.destination(); ++hop) {
        const std::vector<Edge> next = hops.from(at);
        const Edge e = next[pick(hop, next.size())];
        p.links.push_back(topo.link(e).id);
        at = boost::target(e, topo.graph());
    }
    return {p};
}

// Caches NextHops per destination (a flow set usually has few distinct destinations per source).
class RouteCache {
public:
    explicit RouteCache(const Topology& topo) : topo_(&topo) {}
    const NextHops& toward(Vertex dst);

private:
    const Topology* topo_;
    std::unordered_map<Vertex, std::unique_ptr<NextHops>> cache_;
};

}  // namespace fathom::hardware
