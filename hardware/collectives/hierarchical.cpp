// Hierarchical (2D) collectives for groups spanning N nodes with g ranks per node:
//   all-reduce     = intra reduce-scatter (S) -> inter all-reduce (S/g, tree latency) -> intra all-gather (S)
//   all-gather     = inter all-gather (S/g)   -> intra all-gather (S)
//   reduce-scatter = intra reduce-scatter (S) -> inter reduce-scatter (S/g)
// The phases are pipelined over chunks (as NCCL's NVLS-tree and CollNet do), so the bandwidth term
// is the slower phase; the latencies add. Intra phases move (g-1)/g S at the scale-up bandwidth,
// inter phases move (N-1)/N S/g over each GPU's own NIC share. The pipeline fill (collective.h) is
// the slower phase's.
#include "hardware/collectives/collective.h"

#include <algorithm>
#include <cmath>

namespace fathom::hardware {
namespace {

struct Phase {
    double bytes = 0;      // bus bytes per GPU
    double bandwidth = 1;  // bytes/s
    double seconds() const { return bytes / bandwidth; }
};

// The phase that sets the bandwidth term (the phases are pipelined).
Phase slower_phase(Collective op, double bytes, const CollectiveContext& ctx) {
    const double g = ctx.layout.ranks_per_node;
    const double nodes = ctx.layout.nodes;
    const double phases = op == Collective::AllReduce ? 2 : 1;
    const double intra_bw = (op == Collective::AllReduce && ctx.nvls) ? ctx.nvls_bandwidth : ctx.intra.bandwidth;
    const Phase intra{phases * (g - 1) / g * bytes, intra_bw};
    const Phase inter{phases * (nodes - 1) / nodes * (bytes / g), ctx.inter.bandwidth};
    return intra.seconds() >= inter.seconds() ? intra : inter;
}

class Hierarchical final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return ctx.layout.nodes > 1 && ctx.layout.ranks_per_node > 1 &&
               (op == Collective::AllReduce || op == Collective::AllGather || op == Collective::ReduceScatter);
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return fixed_time(op, bytes, ctx) + slower_phase(op, bytes, ctx).seconds();
    }
    double fixed_time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const double g = ctx.layout.ranks_per_node;
        const double nodes = ctx.layout.nodes;
        const Phase slow = slower_phase(op, bytes, ctx);
        const double fill = pipeline_fill(slow.bytes, slow.bandwidth, ctx);
        if (op == Collective::AllReduce) {
            const double depth = std::ceil(std::log2(nodes));
            return ctx.launch + 2 * (g - 1) * ctx.intra.latency + 2 * depth * ctx.inter.latency + fill;
        }
        return ctx.launch + (g - 1) * ctx.intra.latency + (nodes - 1) * ctx.inter.latency + fill;
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
