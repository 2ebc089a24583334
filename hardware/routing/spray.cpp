// Routing "spray": packet spraying (adaptive routing / Spectrum-X, Ultra Ethernet's packet
// spraying): each flow split evenly at every hop over the equal-cost next hops, so a flow's bytes
// spread over all fewest-hop paths and no single uplink carries an elephant. Where more than
// kMaxPaths paths exist (three-tier trees), the flow is split over kMaxPaths of them spread evenly
// across the candidates at every hop.
#include "hardware/routing/routing.h"

namespace fathom::hardware {
namespace {

constexpr size_t kMaxPaths = 64;

class Spray final : public RoutingStrategy {
public:
    std::vector<Path> route(const Topology& topo, const NextHops& hops, Vertex src, uint64_t, int64_t) const override {
        if (src == hops.destination()) return {};
        std::vector<Path> done;
        struct Partial {
            Vertex at;
            Path path;
        };
        std::vector<Partial> open{{src, Path{}}};
        while (!open.empty()) {
            std::vector<Partial> next_open;
            for (auto& p : open) {
                if (p.at == hops.destination()) {
                    done.push_back(std::move(p.path));
                    continue;
                }
                std::vector<Edge> next = hops.from(p.at);
                // Keep the total number of partial paths within kMaxPaths: take every stride-th candidate.
                const size_t room = std::max<size_t>(1, kMaxPaths / std::max<size_t>(1, open.size()));
                const size_t take = std::min(next.size(), room);
                for (size_t i = 0; i < take; ++i) {
                    const Edge e = next[i * next.size() / take];
                    Partial q{boost::target(e, topo.graph()), p.path};
                    q.path.links.push_back(topo.link(e).id);
                    q.path.share = p.path.share / static_cast<double>(take);
                    next_open.push_back(std::move(q));
                }
            }
            open = std::move(next_open);
        }
        return done;
    }
};

}  // namespace

std::unique_ptr<RoutingStrategy> make_spray_routing() { return std::make_unique<Spray>(); }

}  // namespace fathom::hardware
