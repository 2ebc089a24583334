#pragma once
// The narrow network interface that workloads use to cost communication. Implementations:
// the analytical model here (closed-form collectives over a hierarchical topology, used by
// default and by the plan searcher); a flow-level SimGrid backend can implement the same
// interface later without touching workloads.
//
// Ranks are numbered node-major: GPU i sits in node i / gpus_per_node. A communicator is given
// by its size and the stride between consecutive members (Megatron orders ranks tp, cp, dp, pp,
// so a TP group has stride 1, a DP group stride tp x cp, a PP pair stride tp x cp x dp). All
// groups of the same kind run the collective at the same time; the model charges the shared
// links for that (each GPU's NIC share, the leaf uplinks under oversubscription).
#include <memory>
#include <string>

#include "hardware/collectives/collective.h"
#include "hardware/spec.h"

namespace fathom::hardware {

struct CommGroup {
    int size = 1;
    int stride = 1;
};

struct CollectiveCost {
    double seconds = 0;
    std::string algorithm;  // registry name of the algorithm used
};

class NetworkModel {
public:
    virtual ~NetworkModel() = default;
    virtual CollectiveCost collective(Collective op, double bytes, const CommGroup& group) const = 0;
    // The layout (nodes spanned, ranks per node) of a group on this cluster.
    virtual GroupLayout layout(const CommGroup& group) const = 0;
};

// `algorithm` empty: pick the fastest supporting algorithm per call, like NCCL's tuner; else
// force the named one (InputError if unknown, falling back to the fastest where unsupported).
std::unique_ptr<NetworkModel> make_analytical_network(const ClusterSpec& cluster, const std::string& algorithm = "");

}  // namespace fathom::hardware
