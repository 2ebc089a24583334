#include "hardware/collectives/collective.h"

#include <algorithm>

namespace fathom::hardware {

double ring_bandwidth(const CollectiveContext& ctx) {
    if (ctx.layout.nodes <= 1) return ctx.intra.bandwidth;
    // One rank per node: the ring never crosses the scale-up fabric (on a full mesh such a group
    // has no scale-up link at all, and its intra bandwidth is 0).
    if (ctx.layout.ranks_per_node <= 1) return ctx.inter.bandwidth;
    return std::min(ctx.intra.bandwidth, ctx.layout.ranks_per_node * ctx.inter.bandwidth);
}

double bus_factor(Collective op, double ranks) {
    switch (op) {
        case Collective::AllReduce: return 2 * (ranks - 1) / ranks;
        case Collective::Broadcast:
        case Collective::SendRecv: return 1.0;
        default: return (ranks - 1) / ranks;
    }
}

double step_latency(const CollectiveContext& ctx) {
    return ctx.layout.nodes <= 1 ? ctx.intra.latency : std::max(ctx.intra.latency, ctx.inter.latency);
}

double pipeline_fill(double bus_bytes, double bandwidth, const CollectiveContext& ctx) {
    return std::min(ctx.fill_fraction * bus_bytes, ctx.fill_max) / bandwidth;
}

void append_node_flows(std::vector<Flow>& out, const GroupLayout& layout, double per_rank) {
    const int g = layout.ranks_per_node;
    if (g < 2 || per_rank <= 0) return;
    for (int node = 0; node < layout.nodes; ++node)
        for (int i = 0; i < g; ++i)
            for (int k = 1; k < g; ++k) out.push_back(Flow{node * g + i, node * g + (i + k) % g, per_rank / (g - 1)});
}

std::vector<Flow> ring_flows(const GroupLayout& layout, double per_rank, bool closed) {
    std::vector<Flow> out;
    if (layout.ranks < 2 || per_rank <= 0) return out;
    if (layout.nodes <= 1) {
        if (closed) {
            GroupLayout one = layout;
            one.ranks_per_node = layout.ranks;
            one.nodes = 1;
            append_node_flows(out, one, per_rank);
        } else {
            for (int i = 0; i + 1 < layout.ranks; ++i) out.push_back(Flow{i, i + 1, per_rank});
        }
        return out;
    }
    const int g = layout.ranks_per_node, channels = g;
    for (int c = 0; c < channels; ++c) {
        std::vector<int> order;
        for (int node = 0; node < layout.nodes; ++node)
            for (int j = 0; j < g; ++j) order.push_back(node * g + (c + j) % g);
        // Leaving node k, the channel uses the NIC of the member it entered by (local index c).
        const size_t n = order.size();
        for (size_t i = 0; i + (closed ? 0 : 1) < n; ++i) {
            const int src = order[i], dst = order[(i + 1) % n];
            const int via = src / g != dst / g ? (src / g) * g + c : -1;
            out.push_back(Flow{src, dst, per_rank / channels, via == src ? -1 : via});
        }
    }
    return out;
}

std::vector<Flow> allreduce_flows_at(const CollectiveContext& ctx, double bytes, double bandwidth) {
    return ring_flows(ctx.layout,
                      bus_factor(Collective::AllReduce, ctx.layout.ranks) * bytes * ctx.intra.bandwidth / bandwidth);
}

const CollectiveRegistry& collective_registry() {
    static const CollectiveRegistry registry = [] {
        CollectiveRegistry r("collective algorithm");
        r.add("ring", "NCCL ring: n-1 (reduce-scatter/all-gather) or 2(n-1) (all-reduce) pipelined steps", &make_ring);
        r.add("tree", "NCCL double binary tree across nodes, chain inside a node (all-reduce)", &make_tree);
        r.add("hierarchical",
              "intra-node reduce-scatter, inter-node collective on 1/g of the data, intra-node all-gather",
              &make_hierarchical);
        r.add("nvls", "NVLink SHARP in-switch reduction inside one node (all-reduce)", &make_nvls);
        r.add("pairwise", "all-to-all as simultaneous pairwise exchanges", &make_pairwise);
        r.add("direct", "point-to-point send/recv over the best link", &make_direct);
        r.add("peer",
              "serving engines' custom all-reduce inside one node: each GPU reads its peers' buffers over "
              "NVLink (one-shot / two-shot kernels of vLLM, SGLang, TensorRT-LLM)",
              &make_peer_allreduce);
        return r;
    }();
    return registry;
}

}  // namespace fathom::hardware
