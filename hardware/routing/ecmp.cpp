// Routing "ecmp": equal-cost multi-path with a per-flow hash, as switches hash a packet's 5-tuple:
// every packet of a flow takes the same path, and two large flows can land on one link while
// another stays idle (the collisions spraying removes). The hash is SplitMix64 of the flow id and
// the hop, so the choice is deterministic for a given flow set.
#include "hardware/routing/routing.h"
#include "sim/random.h"

namespace fathom::hardware {
namespace {

using sim::mix64;

class Ecmp final : public RoutingStrategy {
public:
    std::vector<Path> route(const Topology& topo, const NextHops& hops, Vertex src, uint64_t flow,
                            int64_t) const override {
        if (src == hops.destination()) return {};
        return follow(topo, hops, src, [flow](int hop, size_t k) {
            return static_cast<size_t>(mix64(flow * 0x100000001b3ULL + static_cast<uint64_t>(hop)) % k);
        });
    }
};

}  // namespace

std::unique_ptr<RoutingStrategy> make_ecmp_routing() { return std::make_unique<Ecmp>(); }

}  // namespace fathom::hardware
