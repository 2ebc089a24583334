#include "models/llm/transformer_ops.h"

namespace fathom::models {
namespace {

constexpr double kAct = 2.0;  // bytes per activation element (bf16)

int64_t tokens(const ShardSpec& s) { return s.micro_batch * s.seq_len / s.cp; }

// Elementwise op over `elements`, reading `reads` tensors and writing `writes` of that size.
OpDesc elementwise(std::string name, double elements, double reads, double writes) {
    return memory_op(std::move(name), elements * kAct * (reads + writes));
}

}  // namespace

std::vector<OpDesc> backward_of(const std::vector<OpDesc>& forward) {
    std::vector<OpDesc> out;
    out.reserve(forward.size() * 2);
    for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
        const OpDesc& f = *it;
        switch (f.kind) {
            case OpKind::Gemm:
                out.push_back(gemm_op(f.name + "_dgrad", f.m, f.k, f.n, f.dtype, f.batch));
                out.push_back(gemm_op(f.name + "_wgrad", f.k, f.n, f.m, f.dtype, f.batch));
                break;
            case OpKind::AttentionFwd: out.push_back(attention_op(true, f.attn, f.dtype)); break;
            case OpKind::MemoryBound: out.push_back(memory_op(f.name + "_bwd", 2 * f.bytes)); break;
            default: break;
        }
    }
    return out;
}

LayerOps transformer_layer_ops(const ModelSpec& m, const ShardSpec& s) {
    const int64_t t = tokens(s);
    const double tf = static_cast<double>(t);
    const double sp_tokens = s.sequence_parallel ? tf / s.tp : tf;
    const int64_t h = m.hidden;
    const double hd = static_cast<double>(h);
    const int64_t dh = m.dim_head();
    const int64_t q_heads = m.heads / s.tp;
    const int64_t kv_heads = std::max<int64_t>(1, m.kv_heads / s.tp);
    const int64_t qkv_out = (q_heads + 2 * kv_heads) * dh;
    const int64_t ffn = m.ffn / s.tp;
    const bool gated = is_gated(m.activation);
    const bool fp8 = s.gemm_dtype == Dtype::fp8;

    std::vector<OpDesc> f;
    const char* norm = m.norm == Norm::RmsNorm ? "rmsnorm" : "layernorm";
    f.push_back(elementwise(std::string(norm) + "_attn", sp_tokens * hd, 1, 1));
    if (fp8) f.push_back(memory_op("fp8_cast_qkv", tf * hd * 3));  // read bf16, write fp8
    f.push_back(gemm_op("qkv", t, qkv_out, h, s.gemm_dtype));
    if (m.position == PositionEmbedding::Rope)
        f.push_back(elementwise("rotary", tf * static_cast<double>((q_heads + kv_heads) * dh), 1, 1));
    AttentionShape a;
    a.batch = s.micro_batch;
    a.heads = q_heads;
    a.kv_heads = kv_heads;
    a.q_len = s.seq_len / s.cp;
    a.kv_len = s.seq_len;
    a.head_dim = dh;
    a.causal = true;
    if (s.flash_attention) {
        f.push_back(attention_op(false, a, Dtype::bf16));
    } else {
        const Dtype d16 = s.gemm_dtype == Dtype::fp8 ? Dtype::bf16 : s.gemm_dtype;
        const int64_t bh = s.micro_batch * q_heads;
        const double scores = static_cast<double>(bh) * static_cast<double>(a.q_len) * static_cast<double>(a.kv_len);
        f.push_back(gemm_op("attention_scores", a.q_len, a.kv_len, dh, d16, bh));
        f.push_back(elementwise("scale_mask_softmax", scores, 1, 1));
        f.push_back(memory_op("attention_dropout", scores * (kAct * 2 + 1)));  // read, write, 1-byte mask
        f.push_back(gemm_op("attention_values", a.q_len, dh, a.kv_len, d16, bh));
    }
    if (fp8) f.push_back(memory_op("fp8_cast_proj", tf * static_cast<double>(q_heads * dh) * 3));
    f.push_back(gemm_op("attn_proj", t, h, q_heads * dh, s.gemm_dtype));
    f.push_back(elementwise("residual_attn", sp_tokens * hd, 2, 1));
    f.push_back(elementwise(std::string(norm) + "_mlp", sp_tokens * hd, 1, 1));
    if (fp8) f.push_back(memory_op("fp8_cast_fc1", tf * hd * 3));
    f.push_back(gemm_op("fc1", t, gated ? 2 * ffn : ffn, h, s.gemm_dtype));
    const double act_elems = tf * static_cast<double>(ffn);
    f.push_back(elementwise(activation_name(m.activation), act_elems, gated ? 2 : 1, 1));
    if (fp8) f.push_back(memory_op("fp8_cast_fc2", act_elems * 3));
    f.push_back(gemm_op("fc2", t, h, ffn, s.gemm_dtype));
    f.push_back(elementwise("residual_mlp", sp_tokens * hd, 2, 1));

    if (!s.fused_elementwise) {
        // Eager mode: norms, activation and rotary run as several unfused kernels each.
        std::vector<OpDesc> eager;
        for (auto& op : f) {
            const bool unfused = op.kind == OpKind::MemoryBound && op.name.rfind("residual", 0) != 0 &&
                                 op.name.rfind("fp8_cast", 0) != 0;
            if (!unfused) {
                eager.push_back(op);
                continue;
            }
            for (int pass = 0; pass < static_cast<int>(kEagerPasses); ++pass) eager.push_back(op);
        }
        f = std::move(eager);
    }
    LayerOps ops;
    ops.backward = backward_of(f);
    ops.forward = std::move(f);
    return ops;
}

LayerOps embedding_ops(const ModelSpec& m, const ShardSpec& s) {
    const double tf = static_cast<double>(tokens(s));
    const double sp_tokens = s.sequence_parallel ? tf / s.tp : tf;
    LayerOps ops;
    // Lookup writes T x h; vocab-parallel embedding masks and sums over tp (the collective is the
    // workload's). Backward scatters the gradient into the table rows.
    ops.forward.push_back(elementwise("embedding", tf * static_cast<double>(m.hidden), 1, 1));
    ops.backward.push_back(elementwise("embedding_bwd", sp_tokens * static_cast<double>(m.hidden), 1, 2));
    return ops;
}

LayerOps head_ops(const ModelSpec& m, const ShardSpec& s) {
    const int64_t t = tokens(s);
    const double tf = static_cast<double>(t);
    const double sp_tokens = s.sequence_parallel ? tf / s.tp : tf;
    const int64_t v = m.vocab / s.tp;
    std::vector<OpDesc> f;
    f.push_back(elementwise(m.norm == Norm::RmsNorm ? "rmsnorm_final" : "layernorm_final",
                            sp_tokens * static_cast<double>(m.hidden), 1, 1));
    // The output layer stays in bf16 under fp8 recipes (Transformer Engine keeps it out of fp8).
    f.push_back(gemm_op("logits", t, v, m.hidden, Dtype::bf16));
    // Fused softmax cross-entropy over the vocab shard: read logits, write fp32 softmax.
    f.push_back(memory_op("cross_entropy", tf * static_cast<double>(v) * (2.0 + 4.0)));
    LayerOps ops;
    ops.backward = backward_of(f);
    ops.forward = std::move(f);
    return ops;
}

double layer_activation_bytes(const ModelSpec& m, const ShardSpec& s) {
    const double tf = static_cast<double>(tokens(s));
    const double h = static_cast<double>(m.hidden);
    const double sp_div = s.sequence_parallel ? s.tp : 1;
    const double dh = static_cast<double>(m.dim_head());
    const double q = static_cast<double>(m.heads / s.tp) * dh;
    const double kv = static_cast<double>(std::max<int64_t>(1, m.kv_heads / s.tp)) * dh;
    const double ffn = static_cast<double>(m.ffn / s.tp);
    const double ffn_in = is_gated(m.activation) ? 2 * ffn : ffn;
    const double gemm_in = s.gemm_dtype == Dtype::fp8 ? 1.0 : kAct;
    // norm inputs (2, bf16) + QKV/FC1 inputs (2, GEMM dtype), sharded by sequence parallelism
    const double sp_part = tf * h / sp_div * (2 * kAct + 2 * gemm_in);
    // Q, K, V and the attention output O (bf16, saved by flash attention; O is also the projection
    // input, plus its fp8 copy under fp8) + FC1 output (activation input, bf16) + activation
    // output (FC2 input, in the GEMM dtype)
    const double fp8_copy = s.gemm_dtype == Dtype::fp8 ? 1.0 : 0.0;
    const double tp_part = tf * ((q + 2 * kv) * kAct + q * (kAct + fp8_copy) + ffn_in * kAct + ffn * gemm_in);
    // Unfused attention also keeps the softmax output (2 bytes), the dropout mask (1) and the
    // dropout output (2) per score: 5 a s^2 b / tp (Korthikanti et al. 2022, Eq. 1).
    const double scores = s.flash_attention ? 0.0
                                            : 5.0 * static_cast<double>(s.micro_batch) * static_cast<double>(m.heads / s.tp) *
                                                  static_cast<double>(s.seq_len / s.cp) * static_cast<double>(s.seq_len);
    return sp_part + tp_part + scores;
}

double layer_selective_activation_bytes(const ModelSpec& m, const ShardSpec& s) {
    const double tf = static_cast<double>(tokens(s));
    const double gemm_in = s.gemm_dtype == Dtype::fp8 ? 1.0 : kAct;
    const double sp_div = s.sequence_parallel ? s.tp : 1;
    const double recomputed = tf * (2 * static_cast<double>(m.hidden) / sp_div * gemm_in +
                                    static_cast<double>(m.ffn / s.tp) * gemm_in);
    return layer_activation_bytes(m, s) - recomputed;
}

std::vector<OpDesc> selective_recompute_ops(const LayerOps& layer) {
    std::vector<OpDesc> out;
    for (const auto& op : layer.forward) {
        if (op.kind != OpKind::MemoryBound) continue;
        if (op.name.rfind("residual", 0) == 0 || op.name == "rotary") continue;  // not recomputed
        out.push_back(op);
    }
    return out;
}

double layer_input_bytes(const ModelSpec& m, const ShardSpec& s) {
    const double tf = static_cast<double>(tokens(s));
    return tf * static_cast<double>(m.hidden) * kAct / (s.sequence_parallel ? s.tp : 1);
}

}  // namespace fathom::models
