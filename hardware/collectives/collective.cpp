#include "hardware/collectives/collective.h"

#include <algorithm>

namespace fathom::hardware {

const char* collective_name(Collective c) {
    switch (c) {
        case Collective::AllReduce: return "all-reduce";
        case Collective::AllGather: return "all-gather";
        case Collective::ReduceScatter: return "reduce-scatter";
        case Collective::AllToAll: return "all-to-all";
        case Collective::Broadcast: return "broadcast";
        case Collective::SendRecv: return "send-recv";
    }
    return "?";
}

double ring_bandwidth(const CollectiveContext& ctx) {
    if (ctx.layout.nodes <= 1) return ctx.intra.bandwidth;
    return std::min(ctx.intra.bandwidth, ctx.layout.ranks_per_node * ctx.inter.bandwidth);
}

double step_latency(const CollectiveContext& ctx) {
    return ctx.layout.nodes <= 1 ? ctx.intra.latency : std::max(ctx.intra.latency, ctx.inter.latency);
}

void append_ring_rounds(std::vector<TransferRound>& out, const std::vector<int>& ring, int steps, double bytes) {
    const size_t n = ring.size();
    if (n < 2) return;
    for (int step = 0; step < steps; ++step) {
        TransferRound round;
        round.reserve(n);
        for (size_t i = 0; i < n; ++i) round.push_back(Transfer{ring[i], ring[(i + 1) % n], bytes});
        out.push_back(std::move(round));
    }
}

const CollectiveRegistry& collective_registry() {
    static const CollectiveRegistry registry = [] {
        CollectiveRegistry r("collective algorithm");
        r.add("ring", "NCCL ring: n-1 (reduce-scatter/all-gather) or 2(n-1) (all-reduce) pipelined steps", &make_ring);
        r.add("tree", "NCCL double binary tree across nodes, chain inside a node (all-reduce)", &make_tree);
        r.add("hierarchical", "intra-node reduce-scatter, inter-node collective on 1/g of the data, intra-node all-gather",
              &make_hierarchical);
        r.add("nvls", "NVLink SHARP in-switch reduction inside one node (all-reduce)", &make_nvls);
        r.add("pairwise", "all-to-all as simultaneous pairwise exchanges", &make_pairwise);
        r.add("direct", "point-to-point send/recv over the best link", &make_direct);
        return r;
    }();
    return registry;
}

}  // namespace fathom::hardware
