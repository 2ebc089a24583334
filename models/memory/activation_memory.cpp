#include "models/memory/activation_memory.h"

#include <algorithm>

namespace fathom::models {
namespace {

constexpr double kAct = 2.0;  // bytes per activation element (bf16)

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const LayerInputs& in) {
    const Sharding& s = in.shard;
    const double tf = static_cast<double>(in.batch.tokens());
    const double h = static_cast<double>(m.hidden);
    const double sp_div = s.sequence_parallel ? s.tp : 1;
    const double dh = static_cast<double>(m.dim_head());
    const double q = static_cast<double>(m.heads / s.tp) * dh;
    const double kv = static_cast<double>(std::max<int64_t>(1, m.kv_heads / s.tp)) * dh;
    const double ffn = static_cast<double>(m.ffn / s.tp);
    const double ffn_in = is_gated(m.activation) ? 2 * ffn : ffn;
    const bool fp8 = in.kernels.gemm_dtype == Dtype::fp8;
    const double gemm_in = fp8 ? 1.0 : kAct;
    // norm inputs (2, bf16) + QKV/FC1 inputs (2, GEMM dtype), sharded by sequence parallelism
    const double sp_part = tf * h / sp_div * (2 * kAct + 2 * gemm_in);
    // Q, K, V and the attention output O (bf16, saved by flash attention; O is also the projection
    // input, plus its fp8 copy under fp8) + FC1 output (activation input, bf16) + activation
    // output (FC2 input, in the GEMM dtype)
    const double fp8_copy = fp8 ? 1.0 : 0.0;
    const double tp_part = tf * ((q + 2 * kv) * kAct + q * (kAct + fp8_copy) + ffn_in * kAct + ffn * gemm_in);
    // Unfused attention also keeps the softmax output (2 bytes), the dropout mask (1) and the
    // dropout output (2) per score: 5 a s^2 b / tp (Korthikanti et al. 2022, Eq. 1), summed over
    // the batch's sequence slices.
    double scores = 0;
    if (!in.kernels.flash_attention)
        for (const SequenceSlice& x : in.batch.slices)
            scores += 5.0 * static_cast<double>(x.count) * static_cast<double>(m.heads / s.tp) *
                      static_cast<double>(x.q_len) * static_cast<double>(x.kv_len);
    return sp_part + tp_part + scores;
}

double layer_selective_activation_bytes(const ModelSpec& m, const LayerInputs& in) {
    const double tf = static_cast<double>(in.batch.tokens());
    const double gemm_in = in.kernels.gemm_dtype == Dtype::fp8 ? 1.0 : kAct;
    const double sp_div = in.shard.sequence_parallel ? in.shard.tp : 1;
    const double recomputed = tf * (2 * static_cast<double>(m.hidden) / sp_div * gemm_in +
                                    static_cast<double>(m.ffn / in.shard.tp) * gemm_in);
    return layer_activation_bytes(m, in) - recomputed;
}

double layer_input_bytes(const ModelSpec& m, const LayerInputs& in) {
    const double tf = static_cast<double>(in.batch.tokens());
    return tf * static_cast<double>(m.hidden) * kAct / (in.shard.sequence_parallel ? in.shard.tp : 1);
}

}  // namespace fathom::models
