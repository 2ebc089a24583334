#include "models/llm/lora.h"

namespace fathom::models {

bool lora_target(OpRole role) {
    return role == OpRole::QkvProjection || role == OpRole::OutProjection || role == OpRole::MlpUp ||
           role == OpRole::MlpDown;
}

LayerProgram with_lora(const LayerProgram& forward, int rank) {
    LayerProgram out;
    for (const auto& s : forward.steps) {
        if (s.kind != ProgramStep::Kind::Compute || s.op.kind != OpKind::Gemm || !lora_target(s.op.role)) {
            out.steps.push_back(s);
            continue;
        }
        ProgramStep base = s;
        base.op.frozen = true;
        out.steps.push_back(base);
        const OpDesc& g = s.op;
        out.compute(gemm_op(g.name + "_lora_a", g.m, rank, g.k, Dtype::bf16, g.batch, OpRole::Lora));
        out.compute(gemm_op(g.name + "_lora_b", g.m, g.n, rank, Dtype::bf16, g.batch, OpRole::Lora));
    }
    return out;
}

LayerProgram frozen(const LayerProgram& program) {
    LayerProgram out;
    for (auto s : program.steps) {
        if (s.grad == GradKind::Weight) continue;
        if (s.kind == ProgramStep::Kind::Compute && s.op.kind == OpKind::Gemm) s.op.frozen = true;
        out.steps.push_back(s);
    }
    return out;
}

double lora_params(const LayerProgram& forward, int rank) {
    double n = 0;
    for (const auto& op : forward.ops())
        if (op.kind == OpKind::Gemm && lora_target(op.role))
            n += static_cast<double>(op.batch) * rank * static_cast<double>(op.k + op.n);
    return n;
}

int lora_slices(const OpDesc& gemm, bool gated) {
    if (gemm.role == OpRole::QkvProjection) return 3;
    if (gemm.role == OpRole::MlpUp && gated) return 2;
    return 1;
}

bool lora_serving_target(OpRole role, bool attention_only) {
    if (attention_only) return role == OpRole::QkvProjection || role == OpRole::OutProjection;
    return lora_target(role);
}

LayerProgram lora_serving_program(const LayerProgram& forward, int64_t rank, int64_t adapters, bool attention_only,
                                  bool gated) {
    LayerProgram out;
    for (const auto& g : forward.ops()) {
        if (g.kind != OpKind::Gemm || !lora_serving_target(g.role, attention_only)) continue;
        const int64_t m = (g.m + adapters - 1) / adapters;
        const int64_t shrink = rank * lora_slices(g, gated);
        out.compute(gemm_op(g.name + "_lora_shrink", m, shrink, g.k, Dtype::bf16, adapters * g.batch, OpRole::Lora));
        out.compute(gemm_op(g.name + "_lora_expand", m, g.n, rank, Dtype::bf16, adapters * g.batch, OpRole::Lora));
    }
    return out;
}

double lora_serving_params(const LayerProgram& forward, int64_t rank, bool attention_only, bool gated) {
    double n = 0;
    for (const auto& g : forward.ops())
        if (g.kind == OpKind::Gemm && lora_serving_target(g.role, attention_only))
            n += static_cast<double>(g.batch) * static_cast<double>(rank) *
                 static_cast<double>(lora_slices(g, gated) * g.k + g.n);
    return n;
}

}  // namespace fathom::models
