// Ring algorithm (NCCL "Ring"). For n ranks with ring bandwidth B and per-step latency a:
//   all-reduce:      2(n-1) a + 2(n-1)/n S / B
//   all-gather/RS:    (n-1) a +  (n-1)/n S / B
//   broadcast:        (n-1) a +        S / B     (pipelined chain)
// Transfers: every step each rank sends S/n to the next (a broadcast: the chain passes S along).
#include <numeric>

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
    std::vector<TransferRound> transfers(Collective op, double bytes, const GroupLayout& layout) const override {
        const int n = layout.ranks;
        std::vector<TransferRound> out;
        if (op == Collective::Broadcast) {
            for (int i = 0; i + 1 < n; ++i) out.push_back({Transfer{i, i + 1, bytes}});
            return out;
        }
        std::vector<int> ring(static_cast<size_t>(n));
        std::iota(ring.begin(), ring.end(), 0);
        append_ring_rounds(out, ring, op == Collective::AllReduce ? 2 * (n - 1) : n - 1, bytes / n);
        return out;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace fathom::hardware
