// All-to-all as simultaneous pairwise exchanges. Each rank sends S/n to every other rank: the
// (g-1) S/n bound for peers in the node go over the scale-up fabric, the (n-g) S/n for other
// nodes over the GPU's NIC share; both proceed in parallel. Latency: one exchange round per
// remote peer is overlapped, so a single step latency of the slowest level.
#include "hardware/collectives/collective.h"

#include <algorithm>

namespace fathom::hardware {
namespace {

class Pairwise final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return op == Collective::AllToAll && ctx.layout.ranks > 1;
    }
    double time(Collective, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        const double g = ctx.layout.ranks_per_node;
        const double intra = (g - 1) / n * bytes / ctx.intra.bandwidth;
        const double inter = ctx.layout.nodes > 1 ? (n - g) / n * bytes / ctx.inter.bandwidth : 0.0;
        return ctx.launch + step_latency(ctx) + std::max(intra, inter);
    }
    // Every rank sends S/n to every other; a flow to another node leaves by the NIC of the sender's
    // node-mate on the receiver's rail (PXN).
    std::vector<Flow> flows(Collective, double bytes, const CollectiveContext& ctx) const override {
        const int n = ctx.layout.ranks, g = ctx.layout.ranks_per_node;
        std::vector<Flow> out;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                if (i == j) continue;
                const int via = i / g != j / g ? (i / g) * g + j % g : -1;
                out.push_back(Flow{i, j, bytes / n, via == i ? -1 : via});
            }
        return out;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_pairwise() { return std::make_unique<Pairwise>(); }

}  // namespace fathom::hardware
