#include "workloads/serving/kv_transfer.h"

namespace fathom::workloads::serving {

KvTransfers::KvTransfers(sim::Simulator& sim, const hardware::NetworkModel& network, std::vector<int> prefill_ranks,
                         std::vector<int> decode_ranks, int streams)
    : prefill_ranks_(std::move(prefill_ranks)),
      decode_ranks_(std::move(decode_ranks)),
      streams_(streams),
      timer_(network.timer(sim)) {
    for (const int from : prefill_ranks_)
        for (const int to : decode_ranks_) {
            const int n = streams_;
            auto pairs = [from, to, n] {
                std::vector<hardware::CommGroup> g;
                for (int k = 0; k < n; ++k) g.push_back(hardware::CommGroup::of({from + k, to + k}));
                return g;
            };
            communicator_.push_back(timer_->add_communicator({pairs, hardware::Collective::SendRecv}));
        }
}

void KvTransfers::start(int from, int to, double bytes, sim::Simulator::Handler arrived) {
    const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
    // The streams run in parallel on their own links: one of them is the transfer (with whatever
    // else moves between the pools at the time, on a flow network).
    const hardware::Transfer one{hardware::Collective::SendRecv, bytes / streams_,
                                 hardware::CommGroup::of({prefill_ranks_[f], decode_ranks_[t]})};
    timer_->start(one, communicator_[f * decode_ranks_.size() + t], std::move(arrived));
}

void KvTransfers::run() { timer_->run(); }

}  // namespace fathom::workloads::serving
