// Serving engines' own all-reduce inside one node (vLLM csrc/custom_all_reduce.cuh, SGLang's and
// TensorRT-LLM's custom all-reduce kernels): the ranks map each other's buffers over NVLink (CUDA
// IPC) and one kernel reduces them, reading the peers' data directly (one-shot for small messages,
// reduce-scatter then all-gather for larger ones, two-shot), instead of NCCL's ring of pipelined
// steps. It wins on the small messages of decode steps (a tensor-parallel all-reduce of a few
// hundred KB, twice a layer) and is used up to a size limit (vLLM: 8 MiB, custom_all_reduce.py
// max_size), for one node with every pair of GPUs linked.
//
// With W = 2(n-1)/n S the bus bytes and the fabric's calibrated peer_* constants (one fit of the
// measured kernel times, nvlink4-nvswitch.yaml):
//   time = latency + rank_latency x n + W / bandwidth          (S <= max_bytes)
// The latency includes the launch and the flag barrier between the ranks.
// Flows: ring-shaped traffic on the GPU-switch links carrying W x intra.bandwidth / bandwidth (the
// kernel's bandwidth is that of the few blocks it runs, well below the links'), as for NVLS.
#include "hardware/collectives/collective.h"

#include <limits>

namespace fathom::hardware {
namespace {

class PeerAllReduce final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return op == Collective::AllReduce && ctx.peer_bandwidth > 0 && ctx.layout.nodes == 1 && ctx.layout.ranks > 1 &&
               ctx.layout.ranks <= 8;
    }
    double time(Collective op, double bytes, const CollectiveContext& ctx) const override {
        if (bytes > ctx.peer_max_bytes) return std::numeric_limits<double>::infinity();  // NCCL's then
        return fixed_time(op, bytes, ctx) +
               bus_factor(Collective::AllReduce, ctx.layout.ranks) * bytes / ctx.peer_bandwidth;
    }
    double fixed_time(Collective, double, const CollectiveContext& ctx) const override {
        return ctx.peer_latency + ctx.peer_rank_latency * ctx.layout.ranks;
    }
    std::vector<Flow> flows(Collective, double bytes, const CollectiveContext& ctx) const override {
        return allreduce_flows_at(ctx, bytes, ctx.peer_bandwidth);
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_peer_allreduce() { return std::make_unique<PeerAllReduce>(); }

}  // namespace fathom::hardware
