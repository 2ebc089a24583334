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

}  // namespace fathom::models
