#include "models/ops/op.h"

namespace fathom::models {

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
        // A decode kernel without GQA sharing streams each key/value head once per query head.
        const double reads = s.kv_read_per_query_head && x.q_len == 1 && s.kv_heads > 0 && s.latent_kv_dim == 0
                                 ? static_cast<double>(s.heads) / static_cast<double>(s.kv_heads)
                                 : 1.0;
        op.bytes += backward ? 3 * q + 2 * kv + q : 2 * q + kv * reads;
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
