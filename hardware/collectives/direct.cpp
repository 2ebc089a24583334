// Point-to-point send/recv between two ranks (a "group" of two): S / B + one step latency, over
// the scale-up fabric when both ranks share a node, else over the sender's NIC share.
#include "hardware/collectives/collective.h"

namespace fathom::hardware {
namespace {

class Direct final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext&) const override { return op == Collective::SendRecv; }
    double time(Collective, double bytes, const CollectiveContext& ctx) const override {
        const bool local = ctx.layout.nodes <= 1;
        const Level& l = local ? ctx.intra : ctx.inter;
        return ctx.launch + l.latency + bytes / l.bandwidth;
    }
    // One flow, member 0 to member 1.
    std::vector<Flow> flows(Collective, double bytes, const CollectiveContext&) const override {
        return {Flow{0, 1, bytes}};
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_direct() { return std::make_unique<Direct>(); }

}  // namespace fathom::hardware
