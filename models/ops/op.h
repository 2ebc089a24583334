#pragma once
// The operation vocabulary shared by the model builders, the cost models and the calibration
// tool. An OpDesc says what one kernel computes (kind, shape, dtype) and what it costs in the
// abstract (FLOPs, bytes moved to and from device memory); cost models turn it into seconds.
#include <cstdint>
#include <string>

#include "hardware/spec.h"

namespace fathom::models {

using hardware::Dtype;

enum class OpKind {
    Gemm,             // C[M,N] = A[M,K] B[K,N], `batch` independent GEMMs of that shape
    AttentionFwd,     // fused (flash) attention forward
    AttentionBwd,     // fused (flash) attention backward
    MemoryBound,      // elementwise / normalization / softmax / copy: limited by bandwidth
    Optimizer,        // fused optimizer update (memory bound)
};
const char* op_kind_name(OpKind k);

struct AttentionShape {
    int64_t batch = 0;
    int64_t heads = 0;     // query heads on this rank
    int64_t kv_heads = 0;  // key/value heads on this rank
    int64_t q_len = 0;     // queries per sequence on this rank
    int64_t kv_len = 0;    // keys per sequence
    int64_t head_dim = 0;
    bool causal = true;
};

struct OpDesc {
    OpKind kind = OpKind::MemoryBound;
    std::string name;   // "qkv", "fc1", "rmsnorm", ... (stable names; calibration tables key on kind+shape)
    Dtype dtype = Dtype::bf16;
    int64_t m = 0, n = 0, k = 0, batch = 1;  // GEMM shape
    AttentionShape attn;
    double flops = 0;  // useful FLOPs
    double bytes = 0;  // bytes read + written in device memory (ideal, once each)
};

// Constructors computing flops and bytes from the shape.
OpDesc gemm_op(std::string name, int64_t m, int64_t n, int64_t k, Dtype dtype, int64_t batch = 1);
// Flash attention: forward FLOPs 4 b h q_len kv_len d (matmuls QK^T and PV), halved for causal
// self-attention (q_len == kv_len); backward 2.5 x forward (FlashAttention-2 convention).
OpDesc attention_op(bool backward, const AttentionShape& shape, Dtype dtype);
OpDesc memory_op(std::string name, double bytes);

}  // namespace fathom::models
