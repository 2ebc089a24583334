// Double binary tree across nodes (NCCL "Tree"), a chain through the ranks of each node.
// All-reduce only. Reduce then broadcast: latency 2 (ceil(log2 N) a_inter + (g-1) a_intra);
// with the two trees each carrying half of the data, the bandwidth term equals the ring's,
// 2(n-1)/n S / B, so the tree wins for small messages over many nodes and ties for large ones.
// Its pipeline fill (collective.h) is the ring's too.
#include "hardware/collectives/collective.h"

#include <cmath>

namespace fathom::hardware {
namespace {

class Tree final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return op == Collective::AllReduce && ctx.layout.nodes > 1;
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return fixed_time(op, bytes, ctx) + bus_factor(op, ctx.layout.ranks) * bytes / ring_bandwidth(ctx);
    }
    double fixed_time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const double depth = std::ceil(std::log2(static_cast<double>(ctx.layout.nodes)));
        const double latency = 2 * (depth * ctx.inter.latency + (ctx.layout.ranks_per_node - 1) * ctx.intra.latency);
        return ctx.launch + latency + pipeline_fill(bus_factor(op, ctx.layout.ranks) * bytes, ring_bandwidth(ctx), ctx);
    }
    // The two trees together load every GPU's links as the ring does (the bandwidth term above is
    // the ring's), so the flows are the ring's.
    std::vector<Flow> flows(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return ring_flows(ctx.layout, bus_factor(op, ctx.layout.ranks) * bytes);
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_tree() { return std::make_unique<Tree>(); }

}  // namespace fathom::hardware
