// NVLink SHARP (NVLS) all-reduce inside one NVSwitch domain: each GPU pushes its data into the
// switch, which reduces and multicasts the result, so a GPU's link carries each byte once per
// direction. nccl-tests still reports busbw = algbw x 2(n-1)/n, which can exceed the link
// bandwidth; the calibrated `nvls_bandwidth` is that achievable bus bandwidth.
//   time = launch + 2 a + 2(n-1)/n S / busbw_nvls
// Flows: see flows() below.
#include "hardware/collectives/collective.h"

namespace fathom::hardware {
namespace {

class Nvls final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return op == Collective::AllReduce && ctx.nvls && ctx.layout.nodes == 1 && ctx.layout.ranks > 2;
    }
    double time(Collective, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        return ctx.launch + 2 * ctx.intra.latency + 2 * (n - 1) / n * bytes / ctx.nvls_bandwidth;
    }
    // The in-switch reduction as ring-shaped traffic on the GPU-switch links, its bytes scaled by
    // intra.bandwidth / nvls_bandwidth so that those links (sized for rings) take the NVLS time.
    std::vector<Flow> flows(Collective, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        return ring_flows(ctx.layout, 2 * (n - 1) / n * bytes * ctx.intra.bandwidth / ctx.nvls_bandwidth);
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls() { return std::make_unique<Nvls>(); }

}  // namespace fathom::hardware
