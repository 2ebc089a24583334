// The interface-level pieces of network_model.h: explicit-member groups, the sibling groups a
// collective runs beside, and the choice of backend.
#include "hardware/network/network_model.h"

#include "hardware/network/simgrid_network.h"

#include <utility>

namespace fathom::hardware {

CommGroup CommGroup::of(std::vector<int> ranks) {
    CommGroup g;
    g.size = static_cast<int>(ranks.size());
    g.members = std::move(ranks);
    return g;
}

std::vector<CommGroup> sibling_groups(const CommGroup& group, int gpus) {
    if (!group.members.empty() || group.size < 1 || group.stride < 1) return {group};
    const long long block = static_cast<long long>(group.size) * group.stride;
    if (block > gpus || gpus % block != 0) return {group};
    std::vector<CommGroup> out;
    for (long long k = 0; k < gpus / block; ++k)
        for (int r = 0; r < group.stride; ++r)
            out.emplace_back(group.size, group.stride, static_cast<int>(k * block + r));
    // `group` first, the others in order.
    for (size_t i = 0; i < out.size(); ++i)
        if (out[i].offset == group.offset) {
            std::swap(out[0], out[i]);
            return out;
        }
    return {group};
}

std::unique_ptr<NetworkModel> make_network(const ClusterSpec& cluster, const std::string& algorithm) {
    if (cluster.network == NetworkBackend::Simgrid) return make_simgrid_network(cluster, cluster.routing, algorithm);
    return make_analytical_network(cluster, algorithm);
}

}  // namespace fathom::hardware
