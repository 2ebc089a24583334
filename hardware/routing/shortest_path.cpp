// Routing "shortest-path": one fixed fewest-hop path per pair, the lowest-id candidate at every hop
// (what a Dijkstra-routed platform gives: every flow between two endpoints on the same links).
#include "hardware/routing/routing.h"

namespace fathom::hardware {
namespace {

class ShortestPath final : public RoutingStrategy {
public:
    std::vector<Path> route(const Topology& topo, const NextHops& hops, Vertex src, uint64_t, int64_t) const override {
        if (src == hops.destination()) return {};
        return follow(topo, hops, src, [](int, size_t) { return size_t{0}; });
    }
};

}  // namespace

std::unique_ptr<RoutingStrategy> make_shortest_path_routing() { return std::make_unique<ShortestPath>(); }

}  // namespace fathom::hardware
