#include "workloads/serving/two_batch_overlap.h"

#include <algorithm>

namespace fathom::workloads::serving {

MicroBatchStages moe_stages(const models::LayerProgram& program, ProgramCoster& coster) {
    MicroBatchStages s;
    int transfers = 0;  // expert all-to-alls passed: 0 before the dispatch, 1 before the combine
    bool attention = false;
    for (const models::ProgramStep& step : program.steps) {
        if (step.kind == models::ProgramStep::Kind::Comm) {
            if (!step.comm.collective) continue;
            const double t = coster.transfer(step.comm);
            if (step.comm.group == models::GroupKind::ep && transfers < 2)
                (transfers++ == 0 ? s.dispatch : s.combine) += t;
            else s.other += t;
            continue;
        }
        const double t = coster.seconds(step.op);
        if (transfers == 0) {
            attention = attention || step.op.role == models::OpRole::Attention;
            (attention ? s.attn1 : s.attn0) += t;
        } else {
            (transfers == 1 ? s.mlp : s.shared) += t;
        }
    }
    return s;
}

double decode_overlap_seconds(const MicroBatchStages& a, const MicroBatchStages& b) {
    return std::max(a.shared + b.attn0, a.dispatch) + a.mlp + std::max(b.attn1, a.combine) +
           std::max(b.shared + a.attn0, b.dispatch) + b.mlp + std::max(a.attn1, b.combine) + a.other + b.other;
}

double prefill_overlap_seconds(const MicroBatchStages& a, const MicroBatchStages& b, double sm_share) {
    auto stage = [&](double compute, double transfer) { return stream_overlap_seconds(compute, transfer, sm_share); };
    const double attn_a = a.attn0 + a.attn1, attn_b = b.attn0 + b.attn1;
    return stage(attn_b + a.shared, a.combine) + stage(attn_a, b.dispatch) + stage(b.mlp, a.dispatch) +
           stage(a.mlp + b.shared, b.combine) + a.other + b.other;
}

double stream_overlap_seconds(double compute, double comm, double sm_share) {
    return std::max(comm, compute + sm_share * comm);
}

}  // namespace fathom::workloads::serving
