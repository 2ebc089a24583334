#pragma once
// Collective communication cost models, one algorithm per file behind CollectiveAlgorithm.
//
// Conventions follow NCCL and nccl-tests:
//  - `bytes` is the nccl-tests "size": the buffer per rank for all-reduce and broadcast, the full
//    gathered buffer for all-gather and reduce-scatter, the per-rank send buffer for all-to-all,
//    and the message for send/recv.
//  - Bus bandwidth busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (all-gather, reduce-scatter,
//    all-to-all), x 1 (broadcast); an algorithm's bandwidth term is written so that an ideal link
//    of bandwidth B gives busbw = B.
//  - Each time is: launch overhead + steps x per-step latency + bytes moved / achievable bandwidth.
//    Achievable bandwidths (`Level::bandwidth`) already include the calibrated efficiency.
#include "sim/enum_names.h"
#include "sim/registry.h"

#include <memory>
#include <string>
#include <vector>

namespace fathom::hardware {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
// fathom's names of the collectives (the measured format has its own: allreduce, ...).
constexpr auto enum_names(Collective) {
    return sim::name_table<Collective>({{Collective::AllReduce, "all-reduce"},
                                        {Collective::AllGather, "all-gather"},
                                        {Collective::ReduceScatter, "reduce-scatter"},
                                        {Collective::AllToAll, "all-to-all"},
                                        {Collective::Broadcast, "broadcast"},
                                        {Collective::SendRecv, "send-recv"}});
}

// Where the ranks of one communicator sit: `nodes` nodes with `ranks_per_node` ranks each.
struct GroupLayout {
    int ranks = 1;
    int ranks_per_node = 1;
    int nodes = 1;
};

struct Level {
    double bandwidth = 0;  // achievable bytes/s per GPU per direction
    double latency = 0;    // seconds per algorithm step
};

struct CollectiveContext {
    GroupLayout layout;
    Level intra;                // scale-up fabric
    Level inter;                // scale-out network, per GPU
    double launch = 0;          // seconds, fixed cost of one collective call
    bool nvls = false;          // in-switch reduction available inside a node
    double nvls_bandwidth = 0;  // achievable NVLS all-reduce bus bandwidth per GPU
    double nvls_latency = 0;    // seconds, NVLS start-up beyond the launch
    double fill_fraction = 0;   // pipeline fill / bandwidth time while chunks grow with the message
    double fill_max = 0;        // bus bytes: the fill once chunks reach their largest size
    // The serving engine's peer-memory all-reduce (ScaleUpSpec::peer_allreduce_*), when the network
    // serves an engine that has one; peer_bandwidth 0: not available.
    double peer_latency = 0, peer_rank_latency = 0, peer_bandwidth = 0, peer_max_bytes = 0;
};

// One flow of a collective's steady state, between members of the group (indices 0..ranks-1,
// node-major: member i sits in node i / ranks_per_node): `bytes` is everything the flow carries
// over the whole call. NCCL pipelines its algorithms over chunks, so all flows of a call run at
// once; on links that nothing else uses, the longest of them takes the algorithm's bandwidth term.
struct Flow {
    int src = 0;
    int dst = 0;
    double bytes = 0;
    // A flow between nodes may leave its node by another member's NIC: the scale-up fabric takes
    // it to member `via` first (NCCL rings enter and leave a node through one NIC, whichever GPU
    // sends last; PXN does the same for all-to-all). -1: the sender's own NIC.
    int via = -1;
};

class CollectiveAlgorithm {
public:
    virtual ~CollectiveAlgorithm() = default;
    virtual bool supports(Collective op, const CollectiveContext& ctx) const = 0;
    // Seconds for one call; only called when supports() is true.
    virtual double time(Collective op, double bytes, const CollectiveContext& ctx) const = 0;
    // The flows of one call (a flow-level network shares its links among them and other traffic);
    // fixed_time() is the part that does not depend on bandwidth sharing. Only called when
    // supports() is true.
    virtual std::vector<Flow> flows(Collective op, double bytes, const CollectiveContext& ctx) const = 0;
    // The part of time(op, bytes, ctx) that a flow-level network does not simulate: by default
    // time(op, 0, ctx), launch and latencies; an algorithm whose start-up grows with the message
    // (NVLS's pipeline fill) says so.
    virtual double fixed_time(Collective op, double bytes, const CollectiveContext& ctx) const {
        (void)bytes;
        return time(op, 0.0, ctx);
    }
};

using CollectiveFactory = std::unique_ptr<CollectiveAlgorithm> (*)();
using CollectiveRegistry = sim::Registry<CollectiveFactory>;

// The built-in algorithms: ring, tree, hierarchical, nvls, pairwise, direct, peer.
const CollectiveRegistry& collective_registry();

// Factories, one per algorithm file.
std::unique_ptr<CollectiveAlgorithm> make_ring();
std::unique_ptr<CollectiveAlgorithm> make_tree();
std::unique_ptr<CollectiveAlgorithm> make_hierarchical();
std::unique_ptr<CollectiveAlgorithm> make_nvls();
std::unique_ptr<CollectiveAlgorithm> make_pairwise();
std::unique_ptr<CollectiveAlgorithm> make_direct();
std::unique_ptr<CollectiveAlgorithm> make_peer_allreduce();

// Bandwidth of the slowest hop of a ring that visits `ranks_per_node` GPUs in each of `nodes`
// nodes: inside a node the scale-up bandwidth; between nodes each GPU's NIC share, and the ring's
// channels use all `ranks_per_node` NICs in parallel (NCCL rings one channel per rail).
double ring_bandwidth(const CollectiveContext& ctx);
// Bus bytes per byte of `bytes` (nccl-tests' busbw / algbw, see the top of this file) for `ranks`
// ranks: 2(n-1)/n all-reduce, (n-1)/n all-gather, reduce-scatter and all-to-all, 1 broadcast and
// send/recv.
double bus_factor(Collective op, double ranks);
double step_latency(const CollectiveContext& ctx);
// The pipeline fill of a call that moves `bus_bytes` at `bandwidth`, in seconds. NCCL cuts each
// channel's share into chunks sized to the message, up to a largest chunk, and the first chunks
// cross the pipeline before the stream is steady: while chunks grow with the message the fill is
// ctx.fill_fraction of the bandwidth time, and at the largest chunk it stays at ctx.fill_max bus
// bytes' worth. On 8 H100 (nccl-tests all-reduce, measured.yaml mb-nccl-allreduce-8xh100-*) this
// is what makes busbw climb from 67 GB/s at 1 MiB through 295 at 32 MiB and 466 at 1 GiB to 480 at
// 16 GiB, which a constant start-up cannot do: one small enough for 1 MiB is 40% fast at 32 MiB.
double pipeline_fill(double bus_bytes, double bandwidth, const CollectiveContext& ctx);

// The flows of ring-shaped traffic in which every member sends `per_rank` bytes in all. Inside one
// node, spread evenly over every peer (NCCL and RCCL run several rings in different orders; on a
// switch or a full mesh that loads each GPU's links evenly). Across nodes, one ring per channel,
// ranks_per_node channels, channel c visiting each node's members from local index c on, so that
// each channel leaves every node by a different rail. `closed` false: a chain (broadcast).
std::vector<Flow> ring_flows(const GroupLayout& layout, double per_rank, bool closed = true);
// An all-reduce of `bytes` that runs at `bandwidth` a rank (NVLS in the switch, a serving engine's
// peer kernel) as ring-shaped traffic on the intra-node links: its bus bytes scaled by
// intra.bandwidth / bandwidth, so that those links (sized for rings) take the algorithm's time.
std::vector<Flow> allreduce_flows_at(const CollectiveContext& ctx, double bytes, double bandwidth);
// All members of each node exchanging `per_rank` bytes among themselves (spread over the peers).
void append_node_flows(std::vector<Flow>& out, const GroupLayout& layout, double per_rank);

}  // namespace fathom::hardware
