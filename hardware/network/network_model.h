#pragma once
// The narrow network interface that workloads use to cost communication, and its analytical
// implementation (closed-form collectives over a hierarchical picture of the cluster; the default
// and what the plan searcher uses).
//
// Ranks are numbered node-major: GPU i sits in node i / gpus_per_node. A communicator is `size`
// ranks starting at global rank `offset`, consecutive members `stride` apart (Megatron orders ranks
// tp, cp, dp, pp, so a TP group has stride 1, a DP group stride tp x cp, a PP pair stride
// tp x cp x dp), or an explicit list of member ranks (a KV-cache transfer between two serving
// replicas, a job on part of the cluster). All groups of the same kind run the collective at the
// same time; the model charges the shared links for that (each GPU's NIC share, the leaf uplinks
// under oversubscription).
//
// What a flow-level backend needs that this interface does not give yet: workloads ask for every
// duration before the replay runs (a collective's time is fixed when its task is created), so
// contention between concurrent transfers cannot change them. A flow-level backend (SimGrid) must
// instead be told when a transfer starts, during the replay, and report when it ends; the
// point-to-point transfers it would start are already listed (transfers()).
#include <memory>
#include <string>
#include <vector>

#include "hardware/collectives/collective.h"
#include "hardware/spec.h"

namespace fathom::hardware {

struct CommGroup {
    int size = 1;
    int stride = 1;
    int offset = 0;            // global rank of the first member
    std::vector<int> members;  // explicit global ranks (ring order); when set, size/stride/offset are unused

    CommGroup() = default;
    CommGroup(int size_, int stride_, int offset_ = 0) : size(size_), stride(stride_), offset(offset_) {}
    static CommGroup of(std::vector<int> ranks);
    int count() const { return members.empty() ? size : static_cast<int>(members.size()); }
    int rank(int i) const { return members.empty() ? offset + i * stride : members[static_cast<size_t>(i)]; }
};

struct CollectiveCost {
    double seconds = 0;
    std::string algorithm;  // registry name of the algorithm used
};

class NetworkModel {
public:
    virtual ~NetworkModel() = default;
    virtual CollectiveCost collective(Collective op, double bytes, const CommGroup& group) const = 0;
    // The layout (nodes spanned, ranks per node at most) of a group on this cluster.
    virtual GroupLayout layout(const CommGroup& group) const = 0;
    // The point-to-point transfers of the algorithm collective() picks, in global ranks.
    virtual std::vector<TransferRound> transfers(Collective op, double bytes, const CommGroup& group) const = 0;
};

// `algorithm` empty: pick the fastest supporting algorithm per call, like NCCL's tuner; else
// force the named one (InputError if unknown, falling back to the fastest where unsupported).
std::unique_ptr<NetworkModel> make_analytical_network(const ClusterSpec& cluster, const std::string& algorithm = "");

}  // namespace fathom::hardware
