// Ring algorithm (NCCL "Ring"). For n ranks with ring bandwidth B and per-step latency a, and
// W the bus bytes (2(n-1)/n S all-reduce, (n-1)/n S all-gather/RS, S broadcast):
//   all-reduce:      launch + 2(n-1) a + W / B + fill(W)
//   all-gather/RS:   launch +  (n-1) a + W / B + fill(W)
//   broadcast:       launch +  (n-1) a + W / B + fill(W)    (pipelined chain)
// fill is pipeline_fill() (collective.h), part of fixed_time().
// Flows: each rank sends 2(n-1)/n S (all-reduce) or (n-1)/n S in all, over ring_flows' channels; a
// broadcast passes S along a chain.

#include "hardware/collectives/collective.h"

namespace fathom::hardware {
namespace {

class Ring final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return ctx.layout.ranks > 1 && (op == Collective::AllReduce || op == Collective::AllGather ||
                                        op == Collective::ReduceScatter || op == Collective::Broadcast);
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return fixed_time(op, bytes, ctx) + bus_factor(op, ctx.layout.ranks) * bytes / ring_bandwidth(ctx);
    }
    double fixed_time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        const double steps = op == Collective::AllReduce ? 2 * (n - 1) : n - 1;
        return ctx.launch + steps * step_latency(ctx) +
               pipeline_fill(bus_factor(op, n) * bytes, ring_bandwidth(ctx), ctx);
    }
    std::vector<Flow> flows(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return ring_flows(ctx.layout, bus_factor(op, ctx.layout.ranks) * bytes, op != Collective::Broadcast);
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace fathom::hardware
