#pragma once
// A training plan: how one model is laid out over the cluster (ParallelLayout, shared with
// serving), what one optimizer step does (TrainingSettings), and how the software stack runs it
// (TrainingStack: kernels, gradient dtype, overlap, buckets, runtime reserve). Plain data with
// equality and a stable hash (for search caches); plans/constraints.h checks it against a model and
// a cluster, and scenarios/ declares its keys.
#include "models/program/layer_program.h"
#include "sim/enum_names.h"
#include "workloads/lengths/length_distribution.h"
#include "workloads/parallelism.h"
#include "workloads/training/moe_routing.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace fathom::workloads {

enum class Recompute { None, Selective, Full };
constexpr auto enum_names(Recompute) {
    return sim::name_table<Recompute>(
        {{Recompute::None, "none"}, {Recompute::Selective, "selective"}, {Recompute::Full, "full"}});
}
// What "selective" recomputes, per framework: the norms and activation functions (Megatron-Core,
// Korthikanti et al. 2022), or PyTorch op-level checkpointing that saves matmul and attention
// outputs except every second matmul (torchtitan's "op" policy).
enum class SelectivePolicy { NormsActivations, EverySecondMatmul };
constexpr auto enum_names(SelectivePolicy) {
    return sim::name_table<SelectivePolicy>({{SelectivePolicy::NormsActivations, "norms_activations"},
                                             {SelectivePolicy::EverySecondMatmul, "every_second_matmul"}});
}
// Main-gradient dtype (accumulation and data-parallel reduction): fp32, bf16, or Megatron-LM's
// rule, fp32 with bf16 or fp8 training (--bf16 forces fp32 accumulation and all-reduce) and the
// parameters' fp16 with fp16 (--fp16 does not).
enum class GradDtype : uint8_t { Fp32, Bf16, Fp32ForBf16 };
constexpr auto enum_names(GradDtype) {
    return sim::name_table<GradDtype>(
        {{GradDtype::Fp32, "fp32"}, {GradDtype::Bf16, "bf16"}, {GradDtype::Fp32ForBf16, "fp32-for-bf16"}});
}

// Activations a micro-batch leaves for its backward pass: kept on the device, or offloaded to the
// nodes' SSDs as the forward pass makes them and read back ahead of the backward pass (SSDTrain,
// papers.md T69; workloads/training/training_memory.h says how much the drives can take).
enum class ActivationOffload : uint8_t { None, Ssd };
constexpr auto enum_names(ActivationOffload) {
    return sim::name_table<ActivationOffload>({{ActivationOffload::None, "none"}, {ActivationOffload::Ssd, "ssd"}});
}

struct TrainingSettings {
    int64_t seq_len = 2048;
    int micro_batch = 1;   // sequences per micro-batch per data-parallel rank
    int global_batch = 1;  // sequences per optimizer step
    int zero_stage = 0;    // 1: optimizer states, 2: + gradients, 3: + parameters (FSDP)
    Recompute recompute = Recompute::None;
    // Under full recomputation, only the first N layers of each piece of the model are recomputed
    // (Megatron-Core --recompute-method block --recompute-num-layers N); the others keep their
    // activations. 0: every layer.
    int recompute_num_layers = 0;
    // Whether layer `index` of a piece (model order) is recomputed as `recompute` says (selective,
    // full), or, under block recomputation, keeps its activations.
    bool layer_recomputed(int index) const {
        return recompute != Recompute::Full || recompute_num_layers == 0 || index < recompute_num_layers;
    }
    std::string schedule = "1f1b";  // pipeline schedule (workloads/training/schedules/)
    // Layers of each piece of the model (pp x vp / routes entries, in model order; a schedule with
    // several routes, DualPipe, repeats the pieces per route); empty = an even split.
    std::vector<int> layers_per_virtual_stage;
    // Mixture of experts: how the router loads the experts (workloads/training/moe_routing.h).
    MoeRouting moe_routing;
    // Mixture of experts: the MoE block of each MoE layer is recomputed from its input in the
    // backward pass, all-to-alls included (Megatron-Core --recompute-modules moe).
    bool recompute_moe = false;
    // Latent attention's up-projections (Q, K, V from the latents) are recomputed in the backward
    // pass instead of kept (Megatron-Core --recompute-modules mla_up_proj; DeepSeek-V3).
    bool recompute_mla_up_proj = false;
    // LoRA fine-tuning (models/llm/lora.h): adapters of this rank on every linear projection of the
    // layers, base weights frozen; 0: every weight is trained.
    int lora_rank = 0;
    // Packed variable-length documents (workloads/training/packing.h): documents of these lengths
    // concatenated and cut into sequences, attention within each document; the busiest
    // data-parallel rank sets the step. Off while the distribution is a fixed value of 0.
    LengthDistribution documents;
    uint64_t documents_seed = 1;
    bool packed() const { return documents.kind != LengthKind::Fixed || documents.value > 0; }

    auto tie() const {
        return std::tie(seq_len, micro_batch, global_batch, zero_stage, recompute, schedule, layers_per_virtual_stage,
                        moe_routing.zipf, moe_routing.expert_loads, moe_routing.capacity_factor, recompute_moe,
                        recompute_mla_up_proj, lora_rank, documents.kind, documents.value, documents.min, documents.max,
                        documents.mean, documents.stddev, documents.zipf_s, documents.bins, documents.weights,
                        documents_seed);
    }
};

// Software-stack behaviour. The defaults are Megatron-Core's; the presets (workloads/stacks/) give
// each framework's values with their sources.
struct TrainingStack {
    models::KernelStack kernels;
    models::CpComm cp_comm = models::CpComm::P2p;  // context-parallel K/V exchange (TE cp_comm_type)
    GradDtype grad_dtype = GradDtype::Fp32;
    // The main-gradient element size as the run has it (fp8 runs keep bf16 parameters).
    double main_grad_bytes() const {
        if (grad_dtype == GradDtype::Bf16) return 2;
        return grad_dtype == GradDtype::Fp32ForBf16 && kernels.gemm_dtype == hardware::Dtype::fp16 ? 2 : 4;
    }
    bool tp_comm_overlap = false;  // TP collectives overlapped with GEMMs (userbuffers, async TP)
    // Under TP overlap, the fraction of a hidden TP transfer's time still charged to the compute
    // (workloads/replay/program_cost.h, ProgramCoster::set_tp_overlap).
    double tp_overlap_contention = 0;
    SelectivePolicy selective_policy = SelectivePolicy::NormsActivations;  // training.recompute: selective
    bool dp_comm_overlap = true;       // gradient reduction overlapped with the backward pass
    bool pp_comm_overlap = true;       // pipeline sends overlap the stage's next compute (false: blocking)
    bool param_gather_overlap = true;  // ZeRO-1/2 parameter all-gather overlapped with the next forward
    double bucket_params = 40e6;       // gradient bucket size, parameters
    // Mixture of experts: the token dispatcher (Megatron-Core --moe-token-dispatcher-type):
    // all-to-all sends every (token, expert) pair; DeepEP (flex) sends a token once per destination
    // rank within a node and once per destination node across nodes.
    models::MoeDispatcher moe_dispatcher = models::MoeDispatcher::AllToAll;
    // The EP all-to-alls run beside another micro-batch's compute (Megatron-Core
    // --overlap-moe-expert-parallel-comm, DualPipe-style 1F1B pairing) instead of blocking.
    bool ep_comm_overlap = false;
    // Bytes outside the model's tensors. Estimate: CUDA context with cuBLAS/cuDNN workspaces
    // (~0.5-0.7 GB on Hopper), NCCL buffers (4 MiB NCCL_BUFFSIZE x channels x peers, ~0.3-0.5 GB)
    // and caching-allocator slack; 1.5 GB is the sum rounded.
    double runtime_reserved = 1.5e9;
    // Not in tie(): added after plan hashes were pinned, hashed only when set (TrainingPlan::hash).
    ActivationOffload activation_offload = ActivationOffload::None;

    auto tie() const {
        return std::tie(kernels.gemm_dtype, kernels.flash_attention, kernels.fused_elementwise,
                        kernels.attention_kernel, kernels.fused_cross_entropy, kernels.fp8_tp_all_gather, cp_comm,
                        grad_dtype, tp_comm_overlap, tp_overlap_contention, selective_policy, pp_comm_overlap,
                        dp_comm_overlap, param_gather_overlap, bucket_params, runtime_reserved, moe_dispatcher,
                        ep_comm_overlap);
    }
};

struct TrainingPlan {
    ParallelLayout layout;
    TrainingSettings training;
    TrainingStack stack;
    std::string stack_preset;  // where `stack` came from (a preset id), for reports; not compared

    int64_t gpus() const { return layout.gpus(); }
    int microbatches() const {
        return static_cast<int>(training.global_batch / (int64_t{layout.dp} * training.micro_batch));
    }
    // Plans are equal when everything that can change a prediction is equal.
    bool operator==(const TrainingPlan& o) const {
        return layout.tie() == o.layout.tie() && training.tie() == o.training.tie() &&
               training.recompute_num_layers == o.training.recompute_num_layers && stack.tie() == o.stack.tie() &&
               stack.activation_offload == o.stack.activation_offload;
    }
    bool operator!=(const TrainingPlan& o) const { return !(*this == o); }
    // Stable across runs and platforms (sim/stable_hash.h); equal plans hash alike.
    uint64_t hash() const;
    // One line for reports: "dp 16  tp 1  pp 1  vp 1  cp 1  ep 16 (etp 1)  micro-batch 1  ...".
    std::string describe() const;
};

}  // namespace fathom::workloads
