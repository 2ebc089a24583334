#pragma once
// How a model is laid out over a cluster's GPUs, shared by every workload (a training step's whole
// cluster; a serving replica's GPUs, built from its pool layout): data, tensor, pipeline (with
// virtual stages per rank), context and expert parallel degrees, and Megatron sequence
// parallelism. Plain data.
//
// Rank order is Megatron's: tp fastest, then cp, then dp, then pp. So a TP group is `tp`
// consecutive GPUs (stride 1), a CP group has stride tp, a DP group stride tp x cp, and
// neighbouring pipeline stages are tp x cp x dp GPUs apart.
#include "hardware/network/network_model.h"
#include "models/program/layer_program.h"

#include <cstdint>
#include <tuple>

namespace fathom::workloads {

struct ParallelLayout {
    int dp = 1, tp = 1, pp = 1, vp = 1, cp = 1, ep = 1;
    int etp = 1;                     // expert tensor parallelism (1 or tp)
    bool sequence_parallel = false;  // only meaningful with tp > 1

    // In 64 bits: each degree fits an int, their product need not (a plan check refuses it).
    int64_t gpus() const { return int64_t{dp} * tp * pp * cp; }
    // The communicator of rank 0 for collectives of `kind`: tp {tp, 1}; cp {cp, tp}; dp, the
    // gradient-reduction group, {dp x cp, tp} (context-parallel ranks hold the same weights); ep
    // {ep, etp} and edp {tp x cp x dp / (ep x etp), ep x etp} (Megatron-Core's expert rank order
    // inside a pipeline stage: etp fastest, then ep, then expert data parallelism); pp the pair of
    // neighbouring stages {2, tp x cp x dp}.
    hardware::CommGroup group(models::GroupKind kind) const;
    // How one rank sees a layer.
    models::Sharding sharding() const;
    auto tie() const { return std::tie(dp, tp, pp, vp, cp, ep, etp, sequence_parallel); }
};

}  // namespace fathom::workloads
