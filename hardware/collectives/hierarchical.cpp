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
    // Concurrent (pipelined) phases: every node's members exchange the intra phases' bytes among
    // themselves; the members of each local index ring across the nodes (one rail each) with the
    // inter phases' bytes. With NVLS the switch reduces: its intra bytes are scaled by
    // intra.bandwidth / nvls_bandwidth so that the GPU-switch links (sized for rings) take its time.
    std::vector<Flow> flows(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const GroupLayout& l = ctx.layout;
        const int g = l.ranks_per_node, nodes = l.nodes;
        const double phases = op == Collective::AllReduce ? 2 : 1;
        double intra = phases * (g - 1.0) / g * bytes;
        if (op == Collective::AllReduce && ctx.nvls) intra *= ctx.intra.bandwidth / ctx.nvls_bandwidth;
        const double inter = phases * (nodes - 1.0) / nodes * bytes / g;
        std::vector<Flow> out;
        append_node_flows(out, l, intra);
        for (int r = 0; r < g; ++r)
            for (int k = 0; k < nodes; ++k) out.push_back(Flow{k * g + r, ((k + 1) % nodes) * g + r, inter});
        return out;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_hierarchical() { return std::make_unique<Hierarchical>(); }

}  // namespace fathom::hardware
