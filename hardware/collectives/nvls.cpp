// NVLink SHARP (NVLS) all-reduce inside one NVSwitch domain: each GPU pushes its data into the
// switch, which reduces and multicasts the result, so a GPU's link carries each byte once per
// direction. nccl-tests still reports busbw = algbw x 2(n-1)/n, which can exceed the link
// bandwidth; the calibrated `nvls_bandwidth` is that achievable bus bandwidth.
//   time = launch + 2 a + 2(n-1)/n S / busbw_nvls
// Not made of point-to-point transfers (transfers() is empty).
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
    // The switch reduces and multicasts: no GPU-to-GPU transfers to list.
    std::vector<TransferRound> transfers(Collective, double, const GroupLayout&) const override { return {}; }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls() { return std::make_unique<Nvls>(); }

}  // namespace fathom::hardware
