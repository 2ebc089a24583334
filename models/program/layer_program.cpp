#include "models/program/layer_program.h"

namespace fathom::models {

TokenBatch TokenBatch::uniform(int64_t sequences, int64_t q_len, int64_t kv_len) {
    TokenBatch b;
    b.slices.push_back(SequenceSlice{sequences, q_len, kv_len});
    return b;
}

int64_t TokenBatch::tokens() const {
    int64_t t = 0;
    for (const auto& s : slices) t += s.count * s.q_len;
    return t;
}

int64_t TokenBatch::kv_tokens() const {
    int64_t t = 0;
    for (const auto& s : slices) t += s.count * s.kv_len;
    return t;
}

void LayerProgram::compute(OpDesc op, GradKind grad) {
    ProgramStep s;
    s.kind = ProgramStep::Kind::Compute;
    s.grad = grad;
    s.op = std::move(op);
    steps.push_back(std::move(s));
}

void LayerProgram::comm(const CommStep& c, GradKind grad) {
    ProgramStep s;
    s.kind = ProgramStep::Kind::Comm;
    s.grad = grad;
    s.comm = c;
    steps.push_back(std::move(s));
}

std::vector<OpDesc> LayerProgram::ops() const {
    std::vector<OpDesc> out;
    for (const auto& s : steps)
        if (s.kind == ProgramStep::Kind::Compute) out.push_back(s.op);
    return out;
}

LayerProgram LayerProgram::only(std::initializer_list<GradKind> grads) const {
    LayerProgram out;
    for (const auto& s : steps)
        for (GradKind g : grads)
            if (s.grad == g) {
                out.steps.push_back(s);
                break;
            }
    return out;
}

LayerProgram backward_program(const LayerProgram& forward) {
    LayerProgram out;
    out.steps.reserve(forward.steps.size() * 2);
    for (auto it = forward.steps.rbegin(); it != forward.steps.rend(); ++it) {
        if (it->kind == ProgramStep::Kind::Comm) {
            const CommStep& c = it->comm;
            if (c.regather_in_backward && c.collective) {
                CommStep again = c;
                again.backward.reset();
                again.regather_in_backward = false;
                out.comm(again, GradKind::Input);
            }
            if (c.backward) {
                CommStep b;
                b.collective = c.backward;
                b.bytes = c.bytes * c.backward_scale;
                b.group = c.group;
                b.gemm_fused = c.gemm_fused;
                b.awaited = c.awaited;
                b.microbatch_overlap = c.microbatch_overlap;
                if (!c.regather_in_backward) {  // the conjugate itself runs beside the backward's attention
                    b.attention_steps = c.attention_steps;
                    b.overlapped = c.overlapped;
                }
                out.comm(b, GradKind::Input);
                if (c.backward_tail) {
                    CommStep tail;
                    tail.collective = c.backward;
                    tail.bytes = c.bytes;
                    tail.group = c.group;
                    tail.awaited = c.awaited;
                    tail.microbatch_overlap = c.microbatch_overlap;
                    out.comm(tail, GradKind::Input);
                }
            }
            continue;
        }
        const OpDesc& f = it->op;
        if (f.role == OpRole::Embedding) continue;
        switch (f.kind) {
            case OpKind::Gemm: {
                // Both gradients run in the forward's kernel class; a grouped GEMM's groups keep their
                // rows (the weight gradient's K).
                auto same_kernel = [&f](OpDesc g) {
                    g.gemm_kernel = f.gemm_kernel;
                    g.group_rows = f.group_rows > 0 ? f.group_rows : f.m;
                    return g;
                };
                out.compute(same_kernel(gemm_op(f.name + "_dgrad", f.m, f.k, f.n, f.dtype, f.batch, f.role)),
                            GradKind::Input);
                if (!f.frozen)
                    out.compute(same_kernel(gemm_op(f.name + "_wgrad", f.k, f.n, f.m, f.dtype, f.batch, f.role)),
                                GradKind::Weight);
                break;
            }
            case OpKind::AttentionFwd: out.compute(attention_op(true, f.attn, f.dtype), GradKind::Input); break;
            case OpKind::MemoryBound:
                out.compute(memory_op(f.name + "_bwd", 2 * f.bytes, f.role, f.kernel, f.n), GradKind::Input);
                break;
            default: break;
        }
    }
    return out;
}

}  // namespace fathom::models
