#pragma once
// Per-layer operator lists of a dense transformer under tensor, sequence and context
// parallelism, for one micro-batch on one rank. Communication is not listed here: the training
// workload adds the TP/CP/DP/PP collectives around these ops.
//
// Shapes on one rank: T = micro_batch x seq_len / cp tokens; GEMMs see all T tokens (sequence
// parallelism shards only the norms/dropouts/residuals, which then see T / tp); heads, KV heads
// and the MLP width are divided by tp. Backward of a GEMM is two GEMMs of equal FLOPs (data
// gradient [M,K] = dY[M,N] W^T and weight gradient [K,N] = X^T dY); backward of flash attention is
// its own kernel (2.5x forward FLOPs); backward of a memory-bound op moves twice its bytes.
#include <vector>

#include "models/llm/model_spec.h"
#include "models/ops/op.h"

namespace fathom::models {

struct ShardSpec {
    int tp = 1;
    bool sequence_parallel = false;
    int cp = 1;
    int64_t micro_batch = 1;
    int64_t seq_len = 2048;
    Dtype gemm_dtype = Dtype::bf16;  // fp8: GEMMs in fp8 with bf16 activations around them
    // false: unfused attention as in Megatron-LM 2021 (batched QK^T GEMM, fused scale-mask-softmax
    // over the full s x s scores, attention dropout, batched PV GEMM); scores are materialized.
    bool flash_attention = true;
    // false: eager PyTorch without torch.compile, where each normalization, activation and rotary
    // embedding is several kernels; modelled as kEagerPasses times the fused op's memory traffic
    // and launches.
    bool fused_elementwise = true;
};
// Passes over the data of an eager (unfused) elementwise op relative to its fused kernel. Counted
// from the eager ops: RMSNorm as x.pow(2).mean(-1), rsqrt, x * r, * weight (about 4 passes);
// SwiGLU as silu(a) then * b (5 tensor traversals against 3 fused, 1.7); rotary through complex
// multiplication with casts (about 3). 3 is their rounded mean; measured.yaml's torchtitan
// torch.compile variant (+15.7% measured) is predicted at +12% with it.
inline constexpr double kEagerPasses = 3.0;

struct LayerOps {
    std::vector<OpDesc> forward;
    std::vector<OpDesc> backward;
};

LayerOps transformer_layer_ops(const ModelSpec& m, const ShardSpec& s);
// Input embedding lookup (first pipeline stage).
LayerOps embedding_ops(const ModelSpec& m, const ShardSpec& s);
// Final norm, output projection (vocab-parallel over tp) and cross-entropy (last pipeline stage).
LayerOps head_ops(const ModelSpec& m, const ShardSpec& s);

// Backward op list derived from a forward op list (see file comment).
std::vector<OpDesc> backward_of(const std::vector<OpDesc>& forward);

// Bytes of activations one layer keeps for its backward pass, per micro-batch on one rank,
// without recomputation, with flash attention and no dropout:
//   sharded by sp (T h / tp when sequence parallel, else T h): inputs of the two norms and of
//   the QKV and FC1 GEMMs (4 tensors);
//   sharded by tp: Q, K, V, the attention output (= projection input), the FC1 output and the
//   activation output (= FC2 input).
// With fp8 GEMMs the saved GEMM inputs are the fp8 copies (1 byte instead of 2).
double layer_activation_bytes(const ModelSpec& m, const ShardSpec& s);
// Bytes one layer keeps under selective recomputation (norms and the MLP activation function are
// recomputed in the backward pass): the layer_activation_bytes minus the two norm outputs (the
// QKV and FC1 GEMM inputs) and the activation output (the FC2 input).
double layer_selective_activation_bytes(const ModelSpec& m, const ShardSpec& s);
// The forward ops that selective recomputation runs again in the backward pass.
std::vector<OpDesc> selective_recompute_ops(const LayerOps& layer);
// Bytes kept per layer under full recomputation: the layer input only.
double layer_input_bytes(const ModelSpec& m, const ShardSpec& s);

}  // namespace fathom::models
