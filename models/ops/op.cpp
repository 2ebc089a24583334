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

OpDesc gemm_op(std::string name, int64_t m, int64_t n, int64_t k, Dtype dtype, int64_t batch) {
    OpDesc op;
    op.kind = OpKind::Gemm;
    op.name = std::move(name);
    op.dtype = dtype;
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    const double e = hardware::dtype_bytes(dtype);
    op.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
    // Inputs in the GEMM dtype, output in bf16 (fp8 GEMMs write bf16).
    op.bytes = static_cast<double>(batch) *
               (e * static_cast<double>(m * k + k * n) + 2.0 * static_cast<double>(m) * static_cast<double>(n));
    return op;
}

OpDesc attention_op(bool backward, const AttentionShape& s, Dtype dtype) {
    OpDesc op;
    op.kind = backward ? OpKind::AttentionBwd : OpKind::AttentionFwd;
    op.name = backward ? "attention_bwd" : "attention_fwd";
    op.dtype = dtype;
    op.attn = s;
    double f = 4.0 * static_cast<double>(s.batch) * static_cast<double>(s.heads) * static_cast<double>(s.q_len) *
               static_cast<double>(s.kv_len) * static_cast<double>(s.head_dim);
    if (s.causal) {
        // Causal mask: query i sees keys up to its own position. For q_len == kv_len that is half
        // of the square (plus the diagonal, neglected); for q_len < kv_len (context-parallel shards
        // balanced over the sequence, or a prefill chunk) the visible fraction is 1 - q/(2 kv).
        const double frac = 1.0 - static_cast<double>(s.q_len) / (2.0 * static_cast<double>(s.kv_len));
        f *= frac;
    }
    op.flops = backward ? 2.5 * f : f;
    const double e = hardware::dtype_bytes(dtype);
    const double q = static_cast<double>(s.batch * s.heads * s.q_len * s.head_dim) * e;
    const double kv = 2.0 * static_cast<double>(s.batch * s.kv_heads * s.kv_len * s.head_dim) * e;
    op.bytes = backward ? 3 * q + 2 * kv + q : 2 * q + kv;  // fwd: read Q, K, V, write O; bwd: + dO, dQ, dK, dV
    return op;
}

OpDesc memory_op(std::string name, double bytes) {
    OpDesc op;
    op.kind = OpKind::MemoryBound;
    op.name = std::move(name);
    op.bytes = bytes;
    return op;
}

}  // namespace fathom::models
