#pragma once
// The narrow network interface that workloads use for communication: a cost oracle (closed-form
// collectives over a hierarchical picture of the cluster, the default and what the plan searcher
// and memory pruning use without any replay) and the timer of communication tasks while a replay
// runs (transfer_timer.h).
//
// Ranks are numbered node-major: GPU i sits in node i / gpus_per_node. A communicator is `size`
// ranks starting at global rank `offset`, consecutive members `stride` apart (Megatron orders ranks
// tp, cp, dp, pp, so a TP group has stride 1, a DP group stride tp x cp, a PP pair stride
// tp x cp x dp), or an explicit list of member ranks (a KV-cache transfer between two serving
// replicas, a job on part of the cluster). All groups of the same kind run the collective at the
// same time; the model charges the shared links for that (each GPU's NIC share, the leaf uplinks
// under oversubscription).
//
// Two implementations: the analytical one (closed forms; tasks end at start + their cost) and the
// SimGrid one (simgrid_network.h: the same algorithms' flows on the cluster's topology graph, all
// groups of a kind at once, so that they contend for shared links; its timer runs every transfer
// of a replay as flows on one fabric as the replay reaches it, so traffic of different kinds, TP
// with DP, one job with another, contends too). Workloads never tell them apart.
#include "hardware/collectives/collective.h"
#include "hardware/spec.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fathom::sim {
class Simulator;
}

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

// What a communication moves: one collective of `bytes` (the nccl-tests size) on the communicator
// `group`.
struct Transfer {
    Collective collective = Collective::AllReduce;
    double bytes = 0;
    CommGroup group;
};

struct CollectiveCost {
    double seconds = 0;
    std::string algorithm;  // registry name of the algorithm used
};

// What one call of a collective does: the algorithm chosen, its closed-form time, the part of it
// that does not depend on bandwidth (launch and latencies), and its flows in global ranks (`via`
// too; -1 where unused).
struct CollectivePlan {
    std::string algorithm;
    double seconds = 0;
    double fixed_seconds = 0;
    std::vector<Flow> flows;
};

class TransferTimer;

class NetworkModel {
public:
    virtual ~NetworkModel() = default;
    // The cost oracle: one collective on `group` (and every group of its kind at once).
    virtual CollectiveCost collective(Collective op, double bytes, const CommGroup& group) const = 0;
    CollectiveCost cost(const Transfer& t) const { return collective(t.collective, t.bytes, t.group); }
    // The layout (nodes spanned, ranks per node at most) of a group on this cluster.
    virtual GroupLayout layout(const CommGroup& group) const = 0;
    // The algorithm collective() picks and its flows. The default has no flows (a test double).
    virtual CollectivePlan plan(Collective op, double bytes, const CommGroup& group) const {
        const CollectiveCost c = collective(op, bytes, group);
        return CollectivePlan{c.algorithm, c.seconds, c.seconds, {}};
    }
    // The timer of communication tasks run on `sim` (transfer_timer.h). The default is the closed
    // form: a task ends at its start + its planned cost, a transfer outside a graph at now + cost().
    virtual std::unique_ptr<TransferTimer> timer(sim::Simulator& sim) const;
    // Called with the number of collectives the backend has simulated so far after each new one (a
    // progress bar); the closed form simulates none and never calls it.
    virtual void set_progress(std::function<void(int64_t)> progress) { (void)progress; }
};

// `algorithm` empty: pick the fastest supporting algorithm per call, like NCCL's tuner; else
// force the named one (InputError if unknown, falling back to the fastest where unsupported).
std::unique_ptr<NetworkModel> make_analytical_network(const ClusterSpec& cluster, const std::string& algorithm = "");

// The cluster's network backend (cluster.network): the analytical model or the SimGrid one with
// the cluster's routing.
std::unique_ptr<NetworkModel> make_network(const ClusterSpec& cluster, const std::string& algorithm = "");

// The groups that run alongside `group` when every group of its kind runs the collective at once:
// `group` shifted by every offset that tiles the cluster's `gpus` ranks with its pattern (a DP
// group of stride s and size n: offsets r + k n s for r < s). Only `group` itself when it has an
// explicit member list or does not tile the cluster.
std::vector<CommGroup> sibling_groups(const CommGroup& group, int gpus);

}  // namespace fathom::hardware
