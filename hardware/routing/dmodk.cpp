// Routing "dmodk": static destination-mod-k routing of fat-trees (InfiniBand's ftree/D-mod-K
// routing engines). Going up, the port at each tier is (d / k_1 / ... / k_{h-1}) mod k_h, d the
// destination's index (its GPU rank, or its ordinal as a switch), k_h the equal-cost choices at
// hop h; going down there is one choice. Flows to one destination share their up-links; flows to
// destinations of consecutive index spread over them.
#include "hardware/routing/routing.h"

namespace fathom::hardware {
namespace {

class DModK final : public RoutingStrategy {
public:
    std::vector<Path> route(const Topology& topo, const NextHops& hops, Vertex src, uint64_t,
                            int64_t dst_index) const override {
        if (src == hops.destination()) return {};
        uint64_t d =
            static_cast<uint64_t>(dst_index >= 0 ? dst_index : std::max(0, topo.vertex(hops.destination()).index));
        return follow(topo, hops, src, [&d](int, size_t k) {
            const size_t pick = static_cast<size_t>(d % k);
            d /= k;
            return pick;
        });
    }
};

}  // namespace

std::unique_ptr<RoutingStrategy> make_dmodk_routing() { return std::make_unique<DModK>(); }

}  // namespace fathom::hardware
