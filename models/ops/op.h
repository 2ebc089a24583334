#pragma once
// The operation vocabulary shared by the layer programs, the cost models and the calibration
// tool. An OpDesc says what one kernel computes (kind, shape, dtype), what it is for in the model
// (a typed role, never a name prefix) and what it costs in the abstract (FLOPs, bytes moved to and
// from device memory); cost models turn it into seconds.
//
// Attention takes a ragged batch: a list of sequence slices, each `count` sequences with `q_len`
// queries attending to `kv_len` keys (a training micro-batch is one slice; a serving iteration
// mixes prefill chunks and decodes). Its FLOPs and bytes are sums over the slices.
#include "hardware/spec.h"
#include "sim/enum_names.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::models {

using hardware::Dtype;

enum class OpKind {
    Gemm,          // C[M,N] = A[M,K] B[K,N], `batch` independent GEMMs of that shape
    AttentionFwd,  // fused (flash) attention forward
    AttentionBwd,  // fused (flash) attention backward
    MemoryBound,   // elementwise / normalization / softmax / copy: limited by bandwidth
    Optimizer,     // fused optimizer update (memory bound)
};
constexpr auto enum_names(OpKind) {
    return sim::name_table<OpKind>({{OpKind::Gemm, "gemm"},
                                    {OpKind::AttentionFwd, "attention_fwd"},
                                    {OpKind::AttentionBwd, "attention_bwd"},
                                    {OpKind::MemoryBound, "memory"},
                                    {OpKind::Optimizer, "optimizer"}});
}

// What an op does in the model. Policies select ops by role (which ops selective recomputation
// runs again, which ones eager PyTorch splits into several kernels); cost tables price memory-bound
// ops by the measured kernel their role runs (OpDesc::kernel).
enum class OpRole : uint8_t {
    Other,
    Norm,        // RMSNorm / LayerNorm (also the final norm)
    Residual,    // residual addition
    Rotary,      // rotary position embedding
    Activation,  // MLP activation (gated or not)
    Fp8Cast,     // bf16 -> fp8 cast of a GEMM input
    QkvProjection,
    OutProjection,     // attention output projection
    MlpUp,             // FC1 (gate and up projections when gated)
    MlpDown,           // FC2
    Attention,         // fused (flash) attention
    AttentionScores,   // unfused attention: Q K^T batched GEMM
    AttentionSoftmax,  // unfused attention: fused scale-mask-softmax
    AttentionDropout,  // unfused attention: dropout on the scores
    AttentionValues,   // unfused attention: P V batched GEMM
    Embedding,         // input embedding lookup (and its gradient scatter)
    Logits,            // output projection to the vocabulary
    CrossEntropy,      // softmax cross-entropy over the vocabulary
    Optimizer,         // optimizer update of a shard of parameters
    Router,            // mixture of experts: router logits GEMM and its top-k softmax
    Permute,           // mixture of experts: gathering tokens by expert (and scattering them back)
    ExpertUp,          // grouped FC1 of the experts on a rank
    ExpertDown,        // grouped FC2 of the experts on a rank
    Lora,              // a LoRA adapter's GEMM (models/llm/lora.h)
};
constexpr auto enum_names(OpRole) {
    return sim::name_table<OpRole>({{OpRole::Other, "other"},
                                    {OpRole::Norm, "norm"},
                                    {OpRole::Residual, "residual"},
                                    {OpRole::Rotary, "rotary"},
                                    {OpRole::Activation, "activation"},
                                    {OpRole::Fp8Cast, "fp8_cast"},
                                    {OpRole::QkvProjection, "qkv_projection"},
                                    {OpRole::OutProjection, "out_projection"},
                                    {OpRole::MlpUp, "mlp_up"},
                                    {OpRole::MlpDown, "mlp_down"},
                                    {OpRole::Attention, "attention"},
                                    {OpRole::AttentionScores, "attention_scores"},
                                    {OpRole::AttentionSoftmax, "attention_softmax"},
                                    {OpRole::AttentionDropout, "attention_dropout"},
                                    {OpRole::AttentionValues, "attention_values"},
                                    {OpRole::Embedding, "embedding"},
                                    {OpRole::Logits, "logits"},
                                    {OpRole::CrossEntropy, "cross_entropy"},
                                    {OpRole::Optimizer, "optimizer"},
                                    {OpRole::Router, "router"},
                                    {OpRole::Permute, "permute"},
                                    {OpRole::ExpertUp, "expert_up"},
                                    {OpRole::ExpertDown, "expert_down"},
                                    {OpRole::Lora, "lora"}});
}

// Which gradient a backward op computes; forward ops are None. Zero-bubble schedules run the
// input-gradient work (on the critical path between stages) apart from the weight-gradient work.
enum class GradKind : uint8_t { None, Input, Weight };

struct SequenceSlice {
    int64_t count = 1;   // sequences of this shape
    int64_t q_len = 0;   // queries per sequence on this rank
    int64_t kv_len = 0;  // keys per sequence (>= q_len for causal self-attention over a prefix)
};

// The class of fused attention kernel: FlashAttention-3 class (FA3, cuDNN fused attention on Hopper:
// what the catalog's attention efficiencies describe) or FlashAttention-2 class (the flash-attn 2
// package, PyTorch SDPA's flash backend, Triton kernels), which reaches a device-specific fraction
// of that on Hopper (hardware calibration `attention_fa2_relative`).
// MlaDecode: absorbed multi-head latent attention over the compressed KV cache (FlashMLA class):
// every query head attends to one shared latent of kv_lora_rank + rope dimensions (keys) whose first
// kv_lora_rank dimensions are also the values; priced at the device's
// `attention_mla_decode_efficiency`.
enum class AttentionKernel : uint8_t { Fa3, Fa2, MlaDecode };
constexpr auto enum_names(AttentionKernel) {
    return sim::name_table<AttentionKernel>(
        {{AttentionKernel::Fa3, "fa3"}, {AttentionKernel::Fa2, "fa2"}, {AttentionKernel::MlaDecode, "mla_decode"}});
}

struct AttentionShape {
    int64_t heads = 0;     // query heads on this rank
    int64_t kv_heads = 0;  // key/value heads on this rank
    int64_t head_dim = 0;
    bool causal = true;
    AttentionKernel kernel = AttentionKernel::Fa3;
    std::vector<SequenceSlice> slices;
    // > 0: keys and values are one latent tensor of this many elements per token, shared by all
    // heads (absorbed MLA): attention reads it once per key instead of 2 x kv_heads x head_dim.
    int64_t latent_kv_dim = 0;
    // Decode slices (q_len 1) read each key/value head once per query head of its group rather than
    // once per group (a kernel without GQA sharing: KernelStack::gqa_shared_kv false).
    bool kv_read_per_query_head = false;
};

// The kernel library a GEMM runs in. Library: the vendor's (cuBLASLt, hipBLASLt, CUTLASS via the
// framework), priced by the catalog's gemm_efficiency with stream-K. DeepGemm: DeepSeek's fp8
// kernels (deepseek-ai/DeepGEMM: 1x128 / 128x128 block-scaled, persistent, no split-K), dense and
// grouped, where the device has that class calibrated (deepgemm_efficiency); else the library's.
// The kernel class a GEMM runs in: the vendor library's dense GEMM; DeepGEMM's fp8 kernels; or a
// grouped GEMM over the experts of a rank (one launch over every expert's rows: Megatron-Core's
// TEGroupedLinear and grouped_gemm, torchtitan's torch._grouped_mm), priced as the dense GEMM of the
// same rows times the device's grouped-kernel curve (AcceleratorCalibration::grouped_relative).
// Library: cuBLAS/hipBLASLt; DeepGemm: DeepGEMM's block-scaled fp8; Grouped: grouped expert GEMMs;
// WeightOnly: Marlin/Machete mixed-input GEMMs (quantized weights, 16-bit activations).
enum class GemmKernel : uint8_t { Library, DeepGemm, Grouped, WeightOnly };

struct OpDesc {
    OpKind kind = OpKind::MemoryBound;
    OpRole role = OpRole::Other;
    std::string name;    // "qkv", "fc1_dgrad", "rmsnorm_attn", ...: for reports and traces
    std::string kernel;  // memory-bound ops: the measured kernel (tools/calibrate) this op runs as
    Dtype dtype = Dtype::bf16;
    int64_t m = 0, n = 0, k = 0, batch = 1;  // GEMM shape
    AttentionShape attn;
    double flops = 0;     // useful FLOPs
    double bytes = 0;     // bytes read + written in device memory (ideal, once each)
    bool frozen = false;  // GEMM: its weight is not trained (LoRA's base weights): no weight gradient
    GemmKernel gemm_kernel = GemmKernel::Library;  // GEMM: the kernel library it runs in
    // Grouped GEMM: the rows each group (expert) holds, where they are not its M (the weight
    // gradient's K); 0: M.
    int64_t group_rows = 0;
};

// Constructors computing flops and bytes from the shape.
OpDesc gemm_op(std::string name, int64_t m, int64_t n, int64_t k, Dtype dtype, int64_t batch = 1,
               OpRole role = OpRole::Other);
// Flash attention: forward FLOPs 4 h q_len kv_len d per sequence (matmuls QK^T and PV); causal
// keeps the visible fraction 1 - q_len / (2 kv_len) (half of the square when q_len == kv_len, the
// queries of a chunk at the end of its context otherwise); backward 2.5 x forward (FlashAttention-2
// convention). Summed over the slices.
OpDesc attention_op(bool backward, const AttentionShape& shape, Dtype dtype);
// FLOPs of one slice of an attention op (the terms attention_op sums).
double attention_slice_flops(bool backward, const AttentionShape& shape, const SequenceSlice& slice);
// A memory-bound op; `kernel` defaults to `name` (the calibration tool's own rows).
// `row_width` > 0: the op is a row kernel (a norm or softmax over rows of that many values), the
// width kept in `n` (calibration tables price row kernels by bytes and width).
OpDesc memory_op(std::string name, double bytes, OpRole role = OpRole::Other, std::string kernel = "",
                 int64_t row_width = 0);
// Whether a measured kernel name is a row kernel (rmsnorm, layernorm, softmax).
bool row_kernel(const std::string& kernel);

// The kernels tools/calibrate measures for memory-bound work. Every memory-bound op a layer
// program emits names one of them as its `kernel`, so a complete calibration table prices it.
const std::vector<std::string>& measured_memory_kernels();

}  // namespace fathom::models
