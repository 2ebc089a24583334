// Ring algorithm (NCCL "Ring"). For n ranks with ring bandwidth B and per-step latency a:
//   all-reduce:      2(n-1) a + 2(n-1)/n S / B
//   all-gather/RS:    (n-1) a +  (n-1)/n S / B
//   broadcast:        (n-1) a +        S / B     (pipelined chain)
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
        const double n = ctx.layout.ranks;
        const double bw = ring_bandwidth(ctx);
        const double a = step_latency(ctx);
        switch (op) {
            case Collective::AllReduce: return ctx.launch + 2 * (n - 1) * a + 2 * (n - 1) / n * bytes / bw;
            case Collective::Broadcast: return ctx.launch + (n - 1) * a + bytes / bw;
            default: return ctx.launch + (n - 1) * a + (n - 1) / n * bytes / bw;
        }
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
