// Hierarchical (2D) collectives for groups spanning N nodes with g ranks per node:
//   all-reduce     = intra reduce-scatter (S) -> inter all-reduce (S/g, tree latency) -> intra all-gather (S)
//   all-gather     = inter all-gather (S/g)   -> intra all-gather (S)
//   reduce-scatter = intra reduce-scatter (S) -> inter reduce-scatter (S/g)
// The phases are pipelined over chunks (as NCCL's NVLS-tree and CollNet do), so the bandwidth term
// is the slower phase; the latencies add. Intra phases move (g-1)/g S at the scale-up bandwidth,
// inter phases move (N-1)/N S/g over each GPU's own NIC share.
#include <algorithm>
#include <cmath>

#include "hardware/collectives/collective.h"

namespace fathom::hardware {
namespace {

class Hierarchical final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return ctx.layout.nodes > 1 && ctx.layout.ranks_per_node > 1 &&
               (op == Collective::AllReduce || op == Collective::AllGather || op == Collective::ReduceScatter);
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const double g = ctx.layout.ranks_per_node;
        const double nodes = ctx.layout.nodes;
        const double intra_bw = (op == Collective::AllReduce && ctx.nvls) ? ctx.nvls_bandwidth : ctx.intra.bandwidth;
        const double intra_one = (g - 1) / g * bytes / intra_bw;
        const double inter_one = (nodes - 1) / nodes * (bytes / g) / ctx.inter.bandwidth;
        if (op == Collective::AllReduce) {
            const double depth = std::ceil(std::log2(nodes));
            const double latency = 2 * (g - 1) * ctx.intra.latency + 2 * depth * ctx.inter.latency;
            return ctx.launch + latency + std::max(2 * intra_one, 2 * inter_one);
        }
        const double latency = (g - 1) * ctx.intra.latency + (nodes - 1) * ctx.inter.latency;
        return ctx.launch + latency + std::max(intra_one, inter_one);
    }
    // Rings inside every node over its g ranks (S/g per step) and rings across nodes over the ranks
    // of equal local index (S/(g N) per step), phase by phase.
    std::vector<TransferRound> transfers(Collective op, double bytes, const GroupLayout& layout) const override {
        const int g = layout.ranks_per_node, nodes = layout.nodes;
        std::vector<TransferRound> out;
        auto phase = [&](bool inside, int steps, double piece) {
            std::vector<TransferRound> rounds;
            const int rings = inside ? nodes : g;
            for (int r = 0; r < rings; ++r) {
                std::vector<int> ring;
                for (int j = 0; j < (inside ? g : nodes); ++j) ring.push_back(inside ? r * g + j : j * g + r);
                std::vector<TransferRound> one;
                append_ring_rounds(one, ring, steps, piece);
                if (rounds.empty()) rounds.resize(one.size());
                for (size_t i = 0; i < one.size(); ++i) rounds[i].insert(rounds[i].end(), one[i].begin(), one[i].end());
            }
            out.insert(out.end(), rounds.begin(), rounds.end());
        };
        const double n = static_cast<double>(g) * nodes;
        switch (op) {
            case Collective::AllReduce:
                phase(true, g - 1, bytes / g);                         // reduce-scatter inside nodes
                phase(false, 2 * (nodes - 1), bytes / g / nodes);      // all-reduce of each S/g shard
                phase(true, g - 1, bytes / g);                         // all-gather inside nodes
                break;
            case Collective::AllGather:
                phase(false, nodes - 1, bytes / n);
                phase(true, g - 1, bytes / g);
                break;
            default:  // reduce-scatter
                phase(true, g - 1, bytes / g);
                phase(false, nodes - 1, bytes / n);
                break;
        }
        return out;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_hierarchical() { return std::make_unique<Hierarchical>(); }

}  // namespace fathom::hardware
