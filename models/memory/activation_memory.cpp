#include "models/memory/activation_memory.h"

#include "models/llm/moe_layer.h"

#include <algorithm>

namespace fathom::models {
namespace {

constexpr double kAct = 2.0;  // bytes per activation element (bf16)

struct Kept {
    double total = 0;       // bytes kept for the backward pass
    double recomputed = 0;  // of which selective recomputation drops (norm and activation outputs)
};

Kept layer_kept(const ModelSpec& m, const LayerInputs& in, bool moe, bool attention_only = false) {
    const Sharding& s = in.shard;
    const double tf = static_cast<double>(in.batch.tokens());
    const double h = static_cast<double>(m.hidden);
    const double sp_div = s.sequence_parallel ? s.tp : 1;
    const double sp = tf / sp_div;
    const bool fp8 = in.kernels.gemm_dtype == Dtype::fp8;
    const double gemm_in = fp8 ? 1.0 : kAct;
    const double fp8_copy = fp8 ? 1.0 : 0.0;
    // Attention half. Widths per rank: the query (= attention output) width and K + V.
    const double q = static_cast<double>(m.q_width() / s.tp);
    double kv = 0;
    if (m.mla.enabled()) kv = static_cast<double>((m.k_width() + m.v_width()) / s.tp);
    else kv = 2.0 * static_cast<double>(std::max<int64_t>(1, m.kv_heads / s.tp)) * static_cast<double>(m.dim_head());
    const double latents =
        m.mla.enabled() ? tf * static_cast<double>(m.mla.q_lora_rank + m.mla.kv_lora_rank) * kAct : 0.0;
    Kept k;
    // norm input (bf16) + QKV input (GEMM dtype), sharded by sequence parallelism
    k.total += sp * h * (kAct + gemm_in);
    k.recomputed += sp * h * gemm_in;
    // Q, K, V and the attention output O (bf16, saved by flash attention; O is also the projection
    // input, plus its fp8 copy under fp8)
    // The attention output: every query head's values (MLA: v_head_dim wide, else the head dim).
    const double o = static_cast<double>((m.mla.enabled() ? m.v_width() : m.q_width()) / s.tp);
    k.total += tf * ((q + kv) * kAct + o * (kAct + fp8_copy)) + latents;
    // Unfused attention also keeps the softmax output (2 bytes), the dropout mask (1) and the
    // dropout output (2) per score: 5 a s^2 b / tp (Korthikanti et al. 2022, Eq. 1), summed over
    // the batch's sequence slices.
    if (!in.kernels.flash_attention)
        for (const SequenceSlice& x : in.batch.slices)
            k.total += 5.0 * static_cast<double>(x.count) * static_cast<double>(m.heads / s.tp) *
                       static_cast<double>(x.q_len) * static_cast<double>(x.kv_len);
    if (attention_only) return k;
    // MLP half: its norm's input and FC1's input (sequence-sharded), then per MLP of width w over
    // r rows the FC1 output (activation input, bf16) and the activation output (FC2 input).
    k.total += sp * h * (kAct + gemm_in);
    k.recomputed += sp * h * gemm_in;
    const bool gated = is_gated(m.activation);
    auto mlp = [&](double rows, double w) {
        k.total += rows * ((gated ? 2 * w : w) * kAct + w * gemm_in);
        k.recomputed += rows * w * gemm_in;
    };
    if (!moe) {
        mlp(tf, static_cast<double>(m.ffn / s.tp));
        return k;
    }
    const MoeSpec& e = m.moe;
    const double rows = moe_expert_rows(m, in);
    const double routed = sp * static_cast<double>(e.top_k);
    k.total += sp * static_cast<double>(e.num_experts) * 4.0;  // router probabilities (fp32)
    k.total += rows * h * gemm_in;                             // permuted expert input
    mlp(rows, static_cast<double>(e.expert_ffn / s.etp));
    k.total += routed * h * kAct;  // expert outputs, weighted in the unpermute
    if (e.shared_experts > 0) mlp(tf, static_cast<double>(e.shared_experts * e.expert_ffn / s.tp));
    return k;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const LayerInputs& in, bool moe) {
    return layer_kept(m, in, moe).total;
}

double layer_selective_activation_bytes(const ModelSpec& m, const LayerInputs& in, bool moe) {
    const Kept k = layer_kept(m, in, moe);
    return k.total - k.recomputed;
}

double every_second_matmul_dropped_bytes(const ModelSpec& m, const LayerInputs& in, bool moe) {
    const Sharding& s = in.shard;
    const double tf = static_cast<double>(in.batch.tokens());
    const double sp = tf / (s.sequence_parallel ? s.tp : 1);
    double dropped = sp * static_cast<double>(m.hidden) * kAct;  // mid-layer residual
    if (!m.mla.enabled())  // K: kv heads per rank x head dim (the Q, K, V that layer_kept keeps)
        dropped += tf * static_cast<double>(std::max<int64_t>(1, m.kv_heads / s.tp)) *
                   static_cast<double>(m.dim_head()) * kAct;
    if (!moe && is_gated(m.activation)) dropped += tf * static_cast<double>(m.ffn / s.tp) * kAct;  // w3 output
    return dropped;
}

double moe_recomputed_layer_bytes(const ModelSpec& m, const LayerInputs& in, bool selective) {
    const Kept k = layer_kept(m, in, true, true);
    const double sp = static_cast<double>(in.batch.tokens()) / (in.shard.sequence_parallel ? in.shard.tp : 1);
    return (selective ? k.total - k.recomputed : k.total) + sp * static_cast<double>(m.hidden) * kAct;
}

double mla_up_projection_bytes(const ModelSpec& m, const LayerInputs& in) {
    if (!m.mla.enabled()) return 0.0;
    const double tf = static_cast<double>(in.batch.tokens());
    return tf * static_cast<double>((m.q_width() + m.k_width() + m.v_width()) / in.shard.tp) * kAct;
}

double layer_input_bytes(const ModelSpec& m, const LayerInputs& in) {
    const double tf = static_cast<double>(in.batch.tokens());
    return tf * static_cast<double>(m.hidden) * kAct / (in.shard.sequence_parallel ? in.shard.tp : 1);
}

}  // namespace fathom::models
