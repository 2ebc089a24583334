#pragma once
// A training plan: how one model is split over the cluster and what one optimizer step does.
// Plain data; plans/constraints.h checks it against a model and a cluster.
//
// Rank order is Megatron's: tp fastest, then cp, then dp, then pp. So a TP group is `tp`
// consecutive GPUs (stride 1), a CP group has stride tp, a DP group stride tp x cp, and
// neighbouring pipeline stages are tp x cp x dp GPUs apart.
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/spec.h"

namespace fathom::workloads {

enum class Recompute { None, Selective, Full };
const char* recompute_name(Recompute r);

struct TrainingPlan {
    int dp = 1, tp = 1, pp = 1, vp = 1, cp = 1;
    bool sequence_parallel = false;
    int micro_batch = 1;     // sequences per micro-batch per data-parallel rank
    int global_batch = 1;    // sequences per optimizer step
    int64_t seq_len = 2048;
    int zero_stage = 0;      // 1: optimizer states, 2: + gradients, 3: + parameters (FSDP)
    Recompute recompute = Recompute::None;
    hardware::Dtype dtype = hardware::Dtype::bf16;  // GEMM dtype
    bool flash_attention = true;  // false: unfused attention with materialized scores
    bool fused_elementwise = true;  // false: eager PyTorch (no torch.compile), unfused norms/activations
    std::string schedule = "1f1b";
    // Layers of each virtual stage (pp x vp entries, virtual stage v = chunk x pp + stage);
    // empty = layers / (pp x vp) each.
    std::vector<int> layers_per_virtual_stage;

    // Software-stack behaviour (defaults: Megatron-Core).
    double grad_bytes = 4;             // main-gradient element size (4 fp32, 2 bf16)
    bool tp_comm_overlap = false;      // TP collectives overlapped with GEMMs (userbuffers, async TP)
    bool dp_comm_overlap = true;       // gradient reduction overlapped with the backward pass
    bool param_gather_overlap = true;  // ZeRO-1/2 parameter all-gather overlapped with the next forward
    double bucket_params = 40e6;       // gradient bucket size, parameters
    // Bytes outside the model's tensors. Estimate: CUDA context with cuBLAS/cuDNN workspaces
    // (~0.5-0.7 GB on Hopper), NCCL buffers (4 MiB NCCL_BUFFSIZE x channels x peers, ~0.3-0.5 GB)
    // and caching-allocator slack; 1.5 GB is the sum rounded.
    double runtime_reserved = 1.5e9;

    int gpus() const { return dp * tp * pp * cp; }
    int microbatches() const { return global_batch / (dp * micro_batch); }
};

}  // namespace fathom::workloads
