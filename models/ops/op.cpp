#include "models/ops/op.h"

namespace fathom::models {

const char* op_kind_name(OpKind k) {
    switch (k) {
        case OpKind::Gemm: return "gemm";
        case OpKind::AttentionFwd: return "attention_fwd";
        case OpKind::AttentionBwd: return "attention_bwd";
        case OpKind::MemoryBound: return "memory";
        case OpKind::Optimizer: return "optimizer";
    }
    return "?";
}

const char* op_role_name(OpRole r) {
    switch (r) {
        case OpRole::Other: return "other";
        case OpRole::Norm: return "norm";
        case OpRole::Residual: return "residual";
        case OpRole::Rotary: return "rotary";
        case OpRole::Activation: return "activation";
        case OpRole::Fp8Cast: return "fp8_cast";
        case OpRole::QkvProjection: return "qkv_projection";
        case OpRole::OutProjection: return "out_projection";
        case OpRole::MlpUp: return "mlp_up";
        case OpRole::MlpDown: return "mlp_down";
        case OpRole::Router: return "router";
        case OpRole::Permute: return "permute";
        case OpRole::ExpertUp: return "expert_up";
        case OpRole::ExpertDown: return "expert_down";
        case OpRole::Lora: return "lora";
        case OpRole::Attention: return "attention";
        case OpRole::AttentionScores: return "attention_scores";
        case OpRole::AttentionSoftmax: return "attention_softmax";
        case OpRole::AttentionDropout: return "attention_dropout";
        case OpRole::AttentionValues: return "attention_values";
        case OpRole::Embedding: return "embedding";
        case OpRole::Logits: return "logits";
        case OpRole::CrossEntropy: return "cross_entropy";
        case OpRole::Optimizer: return "optimizer";
    }
    return "?";
}

OpDesc gemm_op(std::string name, int64_t m, int64_t n, int64_t k, Dtype dtype, int64_t batch, OpRole role) {
    OpDesc op;
    op.kind = OpKind::Gemm;
    op.role = role;
    op.name = std::move(name);
    op.dtype = dtype;
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    const double e = hardware::dtype_bytes(dtype);
    op.flops =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
    // Inputs in the GEMM dtype, output in bf16 (fp8 GEMMs write bf16).
    op.bytes =
        static_cast<double>(batch) *
        (e * (static_cast<double>(m) * static_cast<double>(k) + static_cast<double>(k) * static_cast<double>(n)) +
         2.0 * static_cast<double>(m) * static_cast<double>(n));  // in double: m k overflows int64 for huge shapes
    return op;
}

double attention_slice_flops(bool backward, const AttentionShape& s, const SequenceSlice& x) {
    double f = 4.0 * static_cast<double>(x.count) * static_cast<double>(s.heads) * static_cast<double>(x.q_len) *
               static_cast<double>(x.kv_len) * static_cast<double>(s.head_dim);
    if (s.causal) {
        // Causal mask: query i sees keys up to its own position. For q_len == kv_len that is half
        // of the square (plus the diagonal, neglected); for q_len < kv_len (context-parallel shards
        // balanced over the sequence, or a prefill chunk) the visible fraction is 1 - q/(2 kv).
        const double frac = 1.0 - static_cast<double>(x.q_len) / (2.0 * static_cast<double>(x.kv_len));
        f *= frac;
    }
    return backward ? 2.5 * f : f;
}

OpDesc attention_op(bool backward, const AttentionShape& s, Dtype dtype) {
    OpDesc op;
    op.kind = backward ? OpKind::AttentionBwd : OpKind::AttentionFwd;
    op.role = OpRole::Attention;
    op.name = backward ? "attention_bwd" : "attention_fwd";
    op.dtype = dtype;
    op.attn = s;
    const double e = hardware::dtype_bytes(dtype);
    for (const SequenceSlice& x : s.slices) {
        op.flops += attention_slice_flops(backward, s, x);
        // Forward reads Q, K, V and writes O; backward reads Q, K, V, O, dO and writes dQ, dK, dV.
        const double q = static_cast<double>(x.count * s.heads * x.q_len * s.head_dim) * e;
        const double kv = s.latent_kv_dim > 0
                              ? static_cast<double>(x.count * x.kv_len * s.latent_kv_dim) * e
                              : 2.0 * static_cast<double>(x.count * s.kv_heads * x.kv_len * s.head_dim) * e;
        op.bytes += backward ? 3 * q + 2 * kv + q : 2 * q + kv;
    }
    return op;
}

OpDesc memory_op(std::string name, double bytes, OpRole role, std::string kernel, int64_t row_width) {
    OpDesc op;
    op.kind = OpKind::MemoryBound;
    op.role = role;
    op.kernel = kernel.empty() ? name : std::move(kernel);
    op.name = std::move(name);
    op.bytes = bytes;
    op.n = row_width;
    return op;
}

bool row_kernel(const std::string& kernel) {
    return kernel == "rmsnorm" || kernel == "layernorm" || kernel == "softmax";
}

const std::vector<std::string>& measured_memory_kernels() {
    // tools/calibrate/calibrate.cu, `report(...)` and the copy rows.
    static const std::vector<std::string> kernels = {"rmsnorm",    "layernorm",    "softmax", "swiglu",
                                                     "gelu",       "residual_add", "rotary",  "memcpy_d2d",
                                                     "memcpy_h2d", "memcpy_d2h"};
    return kernels;
}

}  // namespace fathom::models
