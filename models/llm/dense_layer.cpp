#include "models/llm/dense_layer.h"

#include "models/llm/layer_blocks.h"
#include "models/llm/quantization.h"

namespace fathom::models {

using hardware::Collective;
using namespace blocks;

LayerProgram dense_layer_forward(const ModelSpec& m, const LayerInputs& in) {
    LayerProgram p;
    attention_block(p, m, in);
    norm(p, m, in, "_mlp");
    mlp_gemms(p, m, in, m.ffn, "");
    residual(p, m, in, "residual_mlp");
    return apply_weight_only(eager_split(std::move(p), in), in);
}

LayerProgram dense_layer_backward(const ModelSpec& m, const LayerInputs& in) {
    return backward_program(dense_layer_forward(m, in));
}

LayerProgram embedding_forward(const ModelSpec& m, const LayerInputs& in) {
    LayerProgram p;
    // Lookup writes T x h; the vocab-parallel embedding masks and sums its partial rows over tp.
    p.compute(
        elementwise("embedding", tokens_of(in) * static_cast<double>(m.hidden), 1, 1, OpRole::Embedding, "memcpy_d2d"));
    tp_comm(p, in, in.shard.sequence_parallel ? Collective::ReduceScatter : Collective::AllReduce, std::nullopt,
            activation_bytes(m, in));
    return p;
}

LayerProgram embedding_backward(const ModelSpec& m, const LayerInputs& in) {
    LayerProgram p;
    // Scatter-add of the gradient rows into the table: read the gradient, read and write the rows.
    p.compute(elementwise("embedding_bwd", sp_tokens_of(in) * static_cast<double>(m.hidden), 1, 2, OpRole::Embedding,
                          "memcpy_d2d"),
              GradKind::Weight);
    return p;
}

LayerProgram head_forward(const ModelSpec& m, const LayerInputs& in) {
    const int64_t t = in.batch.tokens();
    const double tf = static_cast<double>(t);
    const int64_t v = m.vocab / in.shard.tp;
    LayerProgram p;
    tp_enter(p, in, activation_bytes(m, in));
    p.compute(elementwise(m.norm == Norm::RmsNorm ? "rmsnorm_final" : "layernorm_final",
                          sp_tokens_of(in) * static_cast<double>(m.hidden), 1, 1, OpRole::Norm, norm_kernel(m)));
    // The output layer stays in bf16 under fp8 recipes (Transformer Engine keeps it out of fp8).
    p.compute(gemm_op("logits", t, v, m.hidden, Dtype::bf16, 1, OpRole::Logits));
    // Softmax cross-entropy over the vocab shard: read the logits and write the fp32 softmax, or
    // (fused loss) write the bf16 gradient over the logits in place.
    const double written = in.kernels.fused_cross_entropy ? 2.0 : 4.0;
    p.compute(
        memory_op("cross_entropy", tf * static_cast<double>(v) * (2.0 + written), OpRole::CrossEntropy, "softmax", v));
    return p;
}

LayerProgram head_backward(const ModelSpec& m, const LayerInputs& in) { return backward_program(head_forward(m, in)); }

LayerProgram mla_up_projection_recompute(const LayerProgram& forward) {
    LayerProgram out;
    for (const auto& s : forward.steps)
        if (s.kind == ProgramStep::Kind::Compute &&
            (s.op.name == "q_up" || s.op.name == "q_proj" || s.op.name == "kv_up" ||
             (s.op.name == "rotary" && s.op.role == OpRole::Rotary)))
            out.steps.push_back(s);
    // Only latent attention has up-projections; a layer without them recomputes nothing.
    bool up = false;
    for (const auto& s : out.steps) up = up || s.op.name == "kv_up";
    if (!up) out.steps.clear();
    return out;
}

LayerProgram selective_recompute(const LayerProgram& forward) {
    LayerProgram out;
    for (const auto& s : forward.steps) {
        if (s.kind != ProgramStep::Kind::Compute || s.op.kind != OpKind::MemoryBound) continue;
        // Kept, not recomputed: residuals, rotary outputs, and a MoE layer's router probabilities
        // and permuted/combined rows (activation_memory.h keeps them).
        if (s.op.role == OpRole::Residual || s.op.role == OpRole::Rotary || s.op.role == OpRole::Router ||
            s.op.role == OpRole::Permute)
            continue;
        out.steps.push_back(s);
    }
    return out;
}

LayerProgram every_second_matmul_recompute(const LayerProgram& forward, const ModelSpec& m) {
    LayerProgram out;
    int count = 0;
    // One eager matmul of `n` output columns out of a fused GEMM of op.n columns: recomputed when
    // it is the layer's even-numbered matmul.
    auto matmul = [&](const OpDesc& op, const std::string& name, double n) {
        if (++count % 2 != 0) return;
        OpDesc part = gemm_op(op.name + "." + name, op.m, static_cast<int64_t>(n), op.k, op.dtype, op.batch, op.role);
        part.frozen = op.frozen;
        out.compute(part);
    };
    const bool gated = is_gated(m.activation);
    for (const auto& s : forward.steps) {
        if (s.kind != ProgramStep::Kind::Compute) continue;
        const OpDesc& op = s.op;
        if (op.kind == OpKind::MemoryBound) {
            if (op.role != OpRole::Router && op.role != OpRole::Permute) out.steps.push_back(s);
            continue;
        }
        if (op.kind != OpKind::Gemm || op.role == OpRole::AttentionScores || op.role == OpRole::AttentionValues)
            continue;
        const double n = static_cast<double>(op.n);
        if (op.name == "qkv") {
            const double q = static_cast<double>(m.heads), kv = static_cast<double>(m.kv_heads);
            const double per_head = n / (q + 2 * kv);
            matmul(op, "q", q * per_head);
            matmul(op, "k", kv * per_head);
            matmul(op, "v", kv * per_head);
        } else if (gated && (op.role == OpRole::MlpUp || op.role == OpRole::ExpertUp)) {
            matmul(op, "w1", n / 2);
            matmul(op, "w3", n / 2);
        } else {
            matmul(op, "mm", n);
        }
    }
    return out;
}

double stage_boundary_bytes(const ModelSpec& m, const LayerInputs& in) { return activation_bytes(m, in) / in.shard.tp; }

}  // namespace fathom::models
