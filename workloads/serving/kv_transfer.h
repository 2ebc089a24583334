#pragma once
// How a prompt's KV cache moves from a prefill replica to a decode replica (disaggregated
// serving): min(prefill tp, decode tp) rank pairs in parallel, each sending its share.
//
// On the analytical network a transfer takes its closed-form time, alone. On a flow network
// (cluster.network: simgrid) each transfer runs as flows on one fabric while the serving engine
// runs (workloads/replay/flow_replay.h), one pattern per (prefill replica, decode replica) pair,
// routed once: transfers that overlap share links.
#include "hardware/network/network_model.h"
#include "sim/simulator.h"

#include <memory>
#include <vector>

namespace fathom::hardware {
class FlowSession;
}

namespace fathom::workloads {
class FlowReplay;
}

namespace fathom::workloads::serving {

class KvTransfers {
public:
    // `prefill_ranks`, `decode_ranks`: the first global rank of each replica of the two pools;
    // `streams` rank pairs per transfer.
    KvTransfers(sim::Simulator& sim, const hardware::NetworkModel& network, std::vector<int> prefill_ranks,
                std::vector<int> decode_ranks, int streams);
    ~KvTransfers();
    KvTransfers(const KvTransfers&) = delete;
    KvTransfers& operator=(const KvTransfers&) = delete;

    // Starts moving a cache of `bytes` (each stream its share) from prefill replica `from` to
    // decode replica `to` (pool indices) now; `arrived` runs when the last byte is in.
    void start(int from, int to, double bytes, sim::Simulator::Handler arrived);
    // Runs the engine, and the flows with it, until both are idle.
    void run();

private:
    static constexpr double kReferenceBytes = 256.0 * 1024 * 1024;  // per stream, of each flow pattern

    sim::Simulator& sim_;
    const hardware::NetworkModel& network_;
    std::vector<int> prefill_ranks_, decode_ranks_;
    int streams_ = 1;
    // Flow network only.
    std::unique_ptr<hardware::FlowSession> session_;
    std::unique_ptr<FlowReplay> flows_;
    std::vector<int> pattern_;  // [from * decode replicas + to]
};

}  // namespace fathom::workloads::serving
