#include "workloads/serving/kv_transfer.h"

#include "hardware/network/simgrid_network.h"
#include "workloads/replay/flow_replay.h"

namespace fathom::workloads::serving {

KvTransfers::KvTransfers(sim::Simulator& sim, const hardware::NetworkModel& network, std::vector<int> prefill_ranks,
                         std::vector<int> decode_ranks, int streams)
    : sim_(sim),
      network_(network),
      prefill_ranks_(std::move(prefill_ranks)),
      decode_ranks_(std::move(decode_ranks)),
      streams_(streams) {
    const auto* flow_network = dynamic_cast<const hardware::FlowNetworkModel*>(&network);
    if (!flow_network) return;
    session_ = flow_network->session();
    for (const int from : prefill_ranks_)
        for (const int to : decode_ranks_) {
            std::vector<hardware::CollectiveCall> calls;
            for (int k = 0; k < streams_; ++k)
                calls.push_back({hardware::Collective::SendRecv, kReferenceBytes,
                                 hardware::CommGroup::of({from + k, to + k}), 0.0});
            pattern_.push_back(session_->add_pattern(calls));
        }
    flows_ = std::make_unique<FlowReplay>(sim_, *session_);
}

KvTransfers::~KvTransfers() = default;

void KvTransfers::start(int from, int to, double bytes, sim::Simulator::Handler arrived) {
    const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
    const double bytes_per_stream = bytes / streams_;
    if (flows_) {
        // Every stream's share as flows, with whatever else moves between the pools at the time.
        const int pattern = pattern_[f * decode_ranks_.size() + t];
        flows_->start(pattern, bytes_per_stream / kReferenceBytes, session_->fixed_seconds(pattern),
                      std::move(arrived));
        return;
    }
    // The streams run in parallel on their own links: one of them, alone, is the transfer's time.
    const auto group = hardware::CommGroup::of({prefill_ranks_[f], decode_ranks_[t]});
    const double seconds = network_.collective(hardware::Collective::SendRecv, bytes_per_stream, group).seconds;
    sim_.schedule_at(sim::Time::from_seconds(sim_.now().seconds() + seconds), std::move(arrived));
}

void KvTransfers::run() {
    if (flows_) flows_->run();
    else sim_.run();
}

}  // namespace fathom::workloads::serving
