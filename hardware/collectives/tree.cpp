// Double binary tree across nodes (NCCL "Tree"), a chain through the ranks of each node.
// All-reduce only. Reduce then broadcast: latency 2 (ceil(log2 N) a_inter + (g-1) a_intra);
// with the two trees each carrying half of the data, the bandwidth term equals the ring's,
// 2(n-1)/n S / B, so the tree wins for small messages over many nodes and ties for large ones.
// Transfers: a chain reduce inside each node to its first rank; up the two trees over the nodes'
// first ranks (heap order, and its mirror), each with S/2; back down; a chain broadcast per node.
#include <cmath>

#include "hardware/collectives/collective.h"

namespace fathom::hardware {
namespace {

class Tree final : public CollectiveAlgorithm {
public:
    bool supports(Collective op, const CollectiveContext& ctx) const override {
        return op == Collective::AllReduce && ctx.layout.nodes > 1;
    }
    double time(Collective, double bytes, const CollectiveContext& ctx) const override {
        const double n = ctx.layout.ranks;
        const double depth = std::ceil(std::log2(static_cast<double>(ctx.layout.nodes)));
        const double latency = 2 * (depth * ctx.inter.latency + (ctx.layout.ranks_per_node - 1) * ctx.intra.latency);
        return ctx.launch + latency + 2 * (n - 1) / n * bytes / ring_bandwidth(ctx);
    }
    std::vector<TransferRound> transfers(Collective, double bytes, const GroupLayout& layout) const override {
        const int g = layout.ranks_per_node, nodes = layout.nodes;
        std::vector<TransferRound> out;
        auto chain = [&](bool up) {
            for (int step = 0; step + 1 < g; ++step) {
                TransferRound r;
                const int local = up ? g - 1 - step : step;  // sender inside each node
                for (int node = 0; node < nodes; ++node)
                    r.push_back(up ? Transfer{node * g + local, node * g + local - 1, bytes}
                                   : Transfer{node * g + local, node * g + local + 1, bytes});
                out.push_back(std::move(r));
            }
        };
        // Level of heap node k: floor(log2(k + 1)); tree B is tree A over the mirrored node order.
        auto level = [](int k) { return static_cast<int>(std::floor(std::log2(static_cast<double>(k) + 1.0))); };
        const int depth = nodes > 1 ? level(nodes - 1) : 0;
        auto trees = [&](int lvl, bool up) {
            TransferRound r;
            for (int k = 1; k < nodes; ++k) {
                if (level(k) != lvl) continue;
                const int parent = (k - 1) / 2;
                for (bool mirrored : {false, true}) {
                    const int child_node = mirrored ? nodes - 1 - k : k;
                    const int parent_node = mirrored ? nodes - 1 - parent : parent;
                    const int a = child_node * g, b = parent_node * g;
                    r.push_back(up ? Transfer{a, b, bytes / 2} : Transfer{b, a, bytes / 2});
                }
            }
            out.push_back(std::move(r));
        };
        chain(true);
        for (int lvl = depth; lvl >= 1; --lvl) trees(lvl, true);
        for (int lvl = 1; lvl <= depth; ++lvl) trees(lvl, false);
        chain(false);
        return out;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_tree() { return std::make_unique<Tree>(); }

}  // namespace fathom::hardware
