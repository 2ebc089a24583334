// NVLink SHARP (NVLS) all-reduce inside one NVSwitch domain: each GPU pushes its data into the
// switch, which reduces and multicasts the result, so a GPU's link carries each byte once per
// direction. nccl-tests still reports busbw = algbw x 2(n-1)/n, which can exceed the link
// bandwidth; the calibrated `nvls_bandwidth` is that achievable bus bandwidth.
//
// With W = 2(n-1)/n S the bus bytes and B = nvls_bandwidth:
//   time = launch + L + W / B + fill(W)
// L (nvls_latency) is the start-up of one call: NCCL's tuner prices it at 23 us on NVLink
// (src/graph/tuning.cc, hwLat NVLS), against 0.6-3.4 us per ring step. fill is pipeline_fill()
// (collective.h).
// Flows: see flows() below; the fill is part of fixed_time(), not of the flows.
#include "hardware/collectives/collective.h"

namespace fathom::hardware {
namespace {

class Nvls final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return op == Collective::AllReduce && ctx.nvls && ctx.layout.nodes == 1 && ctx.layout.ranks > 2;
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        return fixed_time(op, bytes, ctx) +
               bus_factor(Collective::AllReduce, ctx.layout.ranks) * bytes / ctx.nvls_bandwidth;
    }
    double fixed_time(Collective, double bytes, const CollectiveContext& ctx) const override {
        return ctx.launch + ctx.nvls_latency +
               pipeline_fill(bus_factor(Collective::AllReduce, ctx.layout.ranks) * bytes, ctx.nvls_bandwidth, ctx);
    }
    // The in-switch reduction as ring-shaped traffic on the GPU-switch links.
    std::vector<Flow> flows(Collective, double bytes, const CollectiveContext& ctx) const override {
        return allreduce_flows_at(ctx, bytes, ctx.nvls_bandwidth);
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls() { return std::make_unique<Nvls>(); }

}  // namespace fathom::hardware
