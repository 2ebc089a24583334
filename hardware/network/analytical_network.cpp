// Analytical network: turns a ClusterSpec into the two bandwidth/latency levels of
// CollectiveContext for each communicator, then asks the collective algorithms.
//
// Scale-up level: achievable bandwidth = per-GPU fabric bandwidth x calibrated ring efficiency; on
// a full mesh a group of g GPUs uses only its g-1 direct links. Scale-out level: each GPU's share
// of the node's NICs x calibrated NIC efficiency, divided by the leaf oversubscription when the
// group spans more nodes than one leaf holds. Latencies grow by two switch hops for each tier a
// group must climb.
#include "hardware/network/network_model.h"
#include "sim/error.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

namespace fathom::hardware {
namespace {

class AnalyticalNetwork final : public NetworkModel {
public:
    AnalyticalNetwork(const ClusterSpec& c, const std::string& forced) : cluster_(c) {
        for (const auto& e : collective_registry().entries()) algorithms_.emplace_back(e.name, e.factory());
        if (!forced.empty()) {
            collective_registry().get(forced);  // throws with the valid names
            forced_ = forced;
        }
    }

    GroupLayout layout(const CommGroup& g) const override {
        const int per_node = cluster_.gpus_per_node;
        GroupLayout l;
        l.ranks = g.count();
        if (l.ranks <= 1) return l;
        if (g.members.empty() && g.stride >= per_node) {
            // Consecutive members are a node or more apart: one per node.
            l.ranks_per_node = 1;
            l.nodes = l.ranks;
        } else if (g.members.empty() && per_node % g.stride == 0 && g.offset % per_node == 0) {
            // Aligned to a node and the stride divides the node: per_node / stride members per node.
            l.ranks_per_node = std::min(l.ranks, per_node / g.stride);
            l.nodes = (l.ranks + l.ranks_per_node - 1) / l.ranks_per_node;
        } else {
            // Anything else: count the members of each node.
            std::map<int, int> per;
            for (int i = 0; i < l.ranks; ++i) ++per[g.rank(i) / per_node];
            l.nodes = static_cast<int>(per.size());
            l.ranks_per_node = 0;
            for (const auto& [node, n] : per) l.ranks_per_node = std::max(l.ranks_per_node, n);
        }
        return l;
    }

    CollectiveCost collective(Collective op, double bytes, const CommGroup& group) const override {
        if (group.count() <= 1 || bytes <= 0) return {0.0, "none"};
        const Choice c = choose(op, bytes, group);
        return {c.seconds, c.name};
    }

    CollectivePlan plan(Collective op, double bytes, const CommGroup& group) const override {
        if (group.count() <= 1 || bytes <= 0) return {"none", 0.0, 0.0, {}};
        const Choice c = choose(op, bytes, group);
        const CollectiveContext ctx = context(group);
        CollectivePlan p{c.name, c.seconds, c.algorithm->fixed_time(op, bytes, ctx),
                         c.algorithm->flows(op, bytes, ctx)};
        for (auto& f : p.flows) {
            f.src = group.rank(f.src);
            f.dst = group.rank(f.dst);
            if (f.via >= 0) f.via = group.rank(f.via);
        }
        return p;
    }

private:
    struct Choice {
        const CollectiveAlgorithm* algorithm = nullptr;
        std::string name;
        double seconds = 0;
    };

    // The forced algorithm where it supports the call, else the fastest.
    Choice choose(Collective op, double bytes, const CommGroup& group) const {
        const CollectiveContext ctx = context(group);
        Choice best;
        best.seconds = std::numeric_limits<double>::infinity();
        for (const auto& [name, algo] : algorithms_) {
            if (!algo->supports(op, ctx)) continue;
            const double t = algo->time(op, bytes, ctx);
            if (name == forced_) return {algo.get(), name, t};
            if (t < best.seconds) best = {algo.get(), name, t};
        }
        FATHOM_CHECK(best.algorithm != nullptr, std::string("no algorithm supports ") + sim::name(op) + " of " +
                                                    std::to_string(bytes) + " bytes over " +
                                                    std::to_string(ctx.layout.ranks) + " ranks (" +
                                                    std::to_string(ctx.layout.nodes) + " nodes)");
        return best;
    }

    CollectiveContext context(const CommGroup& group) const {
        CollectiveContext ctx;
        ctx.layout = layout(group);
        const ScaleUpSpec& su = cluster_.scale_up;
        double intra_bw = su.bandwidth_per_gpu;
        if (su.topology == ScaleUpTopology::FullMesh)
            intra_bw = std::min(su.bandwidth_per_gpu, su.link_bandwidth * (ctx.layout.ranks_per_node - 1));
        ctx.intra.bandwidth = intra_bw * su.busbw_efficiency;
        ctx.intra.latency = su.step_latency;
        ctx.nvls = su.nvls && su.nvls_busbw_efficiency > 0 && ctx.layout.ranks_per_node == cluster_.gpus_per_node;
        ctx.nvls_bandwidth = su.bandwidth_per_gpu * su.nvls_busbw_efficiency;
        ctx.nvls_latency = su.nvls_latency;
        // The fill is the collective library's (chunking), so it is the scale-up fabric's also for
        // groups that span nodes.
        ctx.fill_fraction = su.fill_fraction;
        ctx.fill_max = su.fill_max;
        if (cluster_.peer_allreduce && su.peer_allreduce_bandwidth > 0) {
            ctx.peer_latency = su.peer_allreduce_latency;
            ctx.peer_rank_latency = su.peer_allreduce_rank_latency;
            ctx.peer_bandwidth = su.peer_allreduce_bandwidth;
            ctx.peer_max_bytes = su.peer_allreduce_max_bytes;
        }

        double inter_bw = cluster_.nic_bandwidth_per_gpu() * cluster_.nic.efficiency;
        double hops = 1;  // one leaf (or rail) switch
        if (ctx.layout.nodes > cluster_.nodes_per_leaf) {
            inter_bw /= std::max(1.0, cluster_.oversubscription);
            hops = 3;  // leaf - spine - leaf
            // A 3-tier fat-tree of radix-k switches puts k/2 leaves of k/2 nodes in a pod, so a pod
            // holds nodes_per_leaf^2 nodes; groups beyond it climb to the core (two more hops). A
            // dragonfly group (nodes_per_leaf routers of nodes_per_leaf nodes) is such a pod, and
            // crossing groups takes a global link between two local ones: the same two more hops.
            const int per_pod = cluster_.nodes_per_leaf * cluster_.nodes_per_leaf;
            if ((cluster_.topology == ScaleOutTopology::FatTree3 || cluster_.topology == ScaleOutTopology::Dragonfly) &&
                ctx.layout.nodes > per_pod)
                hops = 5;
        }
        ctx.inter.bandwidth = inter_bw;
        ctx.inter.latency = cluster_.nic.latency + (hops - 1) * cluster_.nic.switch_latency;
        ctx.launch = cluster_.accelerator.launch_overhead;
        return ctx;
    }

    ClusterSpec cluster_;
    std::vector<std::pair<std::string, std::unique_ptr<CollectiveAlgorithm>>> algorithms_;
    std::string forced_;
};

}  // namespace

std::unique_ptr<NetworkModel> make_analytical_network(const ClusterSpec& cluster, const std::string& algorithm) {
    return std::make_unique<AnalyticalNetwork>(cluster, algorithm);
}

}  // namespace fathom::hardware
