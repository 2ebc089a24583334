// The interface-level pieces of network_model.h: explicit-member groups, the sibling groups a
// collective runs beside, the choice of backend, and the closed-form timer of communication tasks.
#include "hardware/network/network_model.h"

#include "hardware/network/simgrid_network.h"
#include "hardware/network/transfer_timer.h"

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

namespace {

// Closed forms: a task's planned duration is its cost, and a graph ends a task after its duration
// by itself, so carrying a task changes nothing (the timer need not even be offered the graph's
// tasks); a transfer outside a graph ends at now + the oracle's cost.
class ClosedFormTimer final : public TransferTimer {
public:
    ClosedFormTimer(sim::Simulator& sim, const NetworkModel& network) : sim_(sim), network_(network) {}

    bool take(sim::TaskGraph&, const sim::TaskRecord&, sim::Time) override { return false; }
    bool times_tasks() const override { return false; }
    int add_communicator(const Communicator&) override { return communicators_++; }
    void carry(sim::TaskGraph&, sim::TaskId, const std::vector<TransferPart>&) override {}
    void start(const Transfer& transfer, int, sim::Simulator::Handler done) override {
        const double seconds = network_.cost(transfer).seconds;
        sim_.schedule_at(sim::Time::from_seconds(sim_.now().seconds() + seconds), std::move(done));
    }
    void run() override { sim_.run(); }
    uint64_t flow_transfers(const sim::TaskGraph&) const override { return 0; }
    uint64_t flows(const sim::TaskGraph&) const override { return 0; }
    uint64_t flow_transfers() const override { return 0; }

private:
    sim::Simulator& sim_;
    const NetworkModel& network_;
    int communicators_ = 0;
};

}  // namespace

std::unique_ptr<TransferTimer> NetworkModel::timer(sim::Simulator& sim) const {
    return std::make_unique<ClosedFormTimer>(sim, *this);
}

std::unique_ptr<NetworkModel> make_network(const ClusterSpec& cluster, const std::string& algorithm) {
    if (cluster.network == NetworkBackend::Simgrid) return make_simgrid_network(cluster, cluster.routing, algorithm);
    return make_analytical_network(cluster, algorithm);
}

}  // namespace fathom::hardware
