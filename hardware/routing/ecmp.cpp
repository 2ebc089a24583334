// Routing "ecmp": equal-cost multi-path with a per-flow hash, as switches hash a packet's 5-tuple:
// every packet of a flow takes the same path, and two large flows can land on one link while
// another stays idle (the collisions spraying removes). The hash is SplitMix64 of the flow id and
// the hop, so the choice is deterministic for a given flow set.
#include "hardware/routing/routing.h"

namespace fathom::hardware {
namespace {

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

class Ecmp final : public RoutingStrategy {
public:
    std::vector<Path> route(const Topology& topo, const NextHops& hops, Vertex src, uint64_t flow,
                            int64_t) const override {
        if (src == hops.destination()) return {};
        return follow(topo, hops, src, [flow](int hop, size_t k) {
            return static_cast<size_t>(mix(flow * 0x100000001b3ULL + static_cast<uint64_t>(hop)) % k);
        });
    }
};

}  // namespace

std::unique_ptr<RoutingStrategy> make_ecmp_routing() { return std::make_unique<Ecmp>(); }

}  // namespace fathom::hardware
