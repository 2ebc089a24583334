#include "models/llm/quantization.h"

namespace fathom::models {

bool quantized_weight_role(OpRole role) {
    switch (role) {
        case OpRole::QkvProjection:
        case OpRole::OutProjection:
        case OpRole::MlpUp:
        case OpRole::MlpDown:
        case OpRole::ExpertUp:
        case OpRole::ExpertDown: return true;
        default: return false;
    }
}

LayerProgram apply_weight_only(LayerProgram p, const LayerInputs& in) {
    if (!in.kernels.weight_only) return p;
    const double w = hardware::dtype_bytes(*in.kernels.weight_only);
    for (auto& s : p.steps) {
        OpDesc& op = s.op;
        if (s.kind != ProgramStep::Kind::Compute || op.kind != OpKind::Gemm || !quantized_weight_role(op.role) ||
            op.dtype != in.kernels.gemm_dtype)
            continue;
        const bool expert = op.role == OpRole::ExpertUp || op.role == OpRole::ExpertDown;
        if (op.batch > 1 && !expert) continue;  // latent attention's absorbed products: activations
        const double e = hardware::dtype_bytes(op.dtype);
        op.bytes -= static_cast<double>(op.batch) * static_cast<double>(op.k) * static_cast<double>(op.n) * (e - w);
        if (!expert) op.gemm_kernel = GemmKernel::WeightOnly;
    }
    return p;
}

}  // namespace fathom::models
