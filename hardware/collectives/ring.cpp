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

double bus_bytes(Collective op, double bytes, double n) {
    switch (op) {
        case Collective::AllReduce: return 2 * (n - 1) / n * bytes;
        case Collective::Broadcast: return bytes;
        default: return (n - 1) / n * bytes;
    }
}

class Ring final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return ctx.layout.ranks > 1 && (op == Collective::AllReduce || op == Collective::AllGather ||
                                        op == Collective::ReduceScatter || op == Collective::Broadcast);
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return fixed_time(op, bytes, ctx) + bus_bytes(op, bytes, ctx.layout.ranks) / ring_bandwidth(ctx);
    }
    double fixed_time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        const double steps = op == Collective::AllReduce ? 2 * (n - 1) : n - 1;
        return ctx.launch + steps * step_latency(ctx) +
               pipeline_fill(bus_bytes(op, bytes, n), ring_bandwidth(ctx), ctx);
    }
    std::vector<Flow> flows(Collective op, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        switch (op) {
            case Collective::AllReduce: return ring_flows(ctx.layout, 2 * (n - 1) / n * bytes);
            case Collective::Broadcast: return ring_flows(ctx.layout, bytes, false);
            default: return ring_flows(ctx.layout, (n - 1) / n * bytes);
        }
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace fathom::hardware
