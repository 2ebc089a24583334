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
#include <memory>
#include <string>

#include "sim/registry.h"

namespace fathom::hardware {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };
const char* collective_name(Collective c);

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
    Level intra;             // scale-up fabric
    Level inter;             // scale-out network, per GPU
    double launch = 0;       // seconds, fixed cost of one collective call
    bool nvls = false;       // in-switch reduction available inside a node
    double nvls_bandwidth = 0;  // achievable NVLS all-reduce bus bandwidth per GPU
};

class CollectiveAlgorithm {
public:
    virtual ~CollectiveAlgorithm() = default;
    virtual bool supports(Collective op, const CollectiveContext& ctx) const = 0;
    // Seconds for one call; only called when supports() is true.
    virtual double time(Collective op, double bytes, const CollectiveContext& ctx) const = 0;
};

using CollectiveFactory = std::unique_ptr<CollectiveAlgorithm> (*)();
using CollectiveRegistry = sim::Registry<CollectiveFactory>;

// The built-in algorithms: ring, tree, hierarchical, nvls, pairwise, direct.
const CollectiveRegistry& collective_registry();

// Factories, one per algorithm file.
std::unique_ptr<CollectiveAlgorithm> make_ring();
std::unique_ptr<CollectiveAlgorithm> make_tree();
std::unique_ptr<CollectiveAlgorithm> make_hierarchical();
std::unique_ptr<CollectiveAlgorithm> make_nvls();
std::unique_ptr<CollectiveAlgorithm> make_pairwise();
std::unique_ptr<CollectiveAlgorithm> make_direct();

// Bandwidth of the slowest hop of a ring that visits `ranks_per_node` GPUs in each of `nodes`
// nodes: inside a node the scale-up bandwidth; between nodes each GPU's NIC share, and the ring's
// channels use all `ranks_per_node` NICs in parallel (NCCL rings one channel per rail).
double ring_bandwidth(const CollectiveContext& ctx);
double step_latency(const CollectiveContext& ctx);

}  // namespace fathom::hardware
