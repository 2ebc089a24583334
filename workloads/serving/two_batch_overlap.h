#pragma once
// Two-batch overlap (SGLang --enable-two-batch-overlap, DeepSeek's inference system): each
// iteration's batch runs as two micro-batches, one's expert all-to-alls beside the other's compute.
// The time of one MoE layer over both micro-batches, by the dispatcher's schedule.
#include "models/program/layer_program.h"
#include "workloads/replay/program_cost.h"

namespace fathom::workloads::serving {

// One micro-batch's MoE layer cut where DeepSeek's decode schedule cuts it (deepseek-ai/
// profile-data README and its decode figure): ATTN-0, the ops before the core attention (norm,
// latent down/up projections, rotary); ATTN-1, the core attention up to the dispatch (output
// projection, residual, router); the dispatch; MLP, the routed experts; the combine; SHARED, the
// rest (shared experts, unpermute, residual). Compute in seconds as the coster prices each op,
// transfers as it prices each collective; collectives of other groups in `other`.
struct MicroBatchStages {
    double attn0 = 0, attn1 = 0, mlp = 0, shared = 0;
    double dispatch = 0, combine = 0, other = 0;
    double compute() const { return attn0 + attn1 + mlp + shared; }
};
MicroBatchStages moe_stages(const models::LayerProgram& program, ProgramCoster& coster);

// DeepEP low-latency (decode): its kernels hold no SM while in flight, and the schedule interleaves
// the micro-batches' stages on one compute stream (SHARED_a + ATTN-0_b beside a's dispatch, MLP_a,
// ATTN-1_b beside a's combine, then the same with a and b swapped):
//   max(S_a + A0_b, D_a) + M_a + max(A1_b, C_a) + max(S_b + A0_a, D_b) + M_b + max(A1_a, C_b),
// plus collectives of other groups in series. The routed experts never overlap a transfer.
double decode_overlap_seconds(const MicroBatchStages& a, const MicroBatchStages& b);

// DeepEP normal kernels (prefill): DeepSeek's prefill schedule (deepseek-ai/profile-data README,
// prefill figure), each stage a stretch of compute X beside one transfer T, X slowed by the SMs the
// kernels hold while T runs, max(T, X + f T):
//   stage(A_b + S_a, C_a) + stage(A_a, D_b) + stage(M_b, D_a) + stage(M_a + S_b, C_b),
// A = ATTN-0 + ATTN-1 (attention and the routing gate), plus collectives of other groups in series.
double prefill_overlap_seconds(const MicroBatchStages& a, const MicroBatchStages& b, double sm_share);

// Other dispatchers: the two micro-batches' compute C on one stream and their transfers M on the
// other, a dispatcher holding a share f of the SMs slowing the compute beside it: max(M, C + f M).
double stream_overlap_seconds(double compute, double comm, double sm_share);

}  // namespace fathom::workloads::serving
