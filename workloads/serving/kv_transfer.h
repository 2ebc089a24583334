#pragma once
// How a prompt's KV cache moves from a prefill replica to a decode replica (disaggregated
// serving): min(prefill tp, decode tp) rank pairs in parallel, each sending its share.
//
// Each transfer goes to the network's timer (hardware/network/transfer_timer.h) on the
// communicator of its (prefill replica, decode replica) pair, whose groups are the rank pairs: on
// the analytical network it takes its closed-form time, alone (the pairs run on their own links);
// on a flow network it runs as flows on one fabric while the serving engine runs, so transfers
// that overlap share links.
#include "hardware/network/network_model.h"
#include "hardware/network/transfer_timer.h"
#include "sim/simulator.h"

#include <memory>
#include <vector>

namespace fathom::workloads::serving {

class KvTransfers {
public:
    // `prefill_ranks`, `decode_ranks`: the first global rank of each replica of the two pools;
    // `streams` rank pairs per transfer.
    KvTransfers(sim::Simulator& sim, const hardware::NetworkModel& network, std::vector<int> prefill_ranks,
                std::vector<int> decode_ranks, int streams);
    KvTransfers(const KvTransfers&) = delete;
    KvTransfers& operator=(const KvTransfers&) = delete;

    // Starts moving a cache of `bytes` (each stream its share) from prefill replica `from` to
    // decode replica `to` (pool indices) now; `arrived` runs when the last byte is in.
    void start(int from, int to, double bytes, sim::Simulator::Handler arrived);
    // Runs the engine, and the network with it, until both are idle.
    void run();

private:
    std::vector<int> prefill_ranks_, decode_ranks_;
    int streams_ = 1;
    std::unique_ptr<hardware::TransferTimer> timer_;
    std::vector<int> communicator_;  // [from * decode replicas + to]
};

}  // namespace fathom::workloads::serving
