// V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, section 4.1;
// reference: sail-sg/zero-bubble-pipeline-parallelism, zbv_greedy.py, "min"): the V-shape
// building block of the shortest lifespan, a third of 1F1B's peak memory. Stage s of p runs
// micro-batch 0's F0, F1, B1, B0 at slots s, 2p - s - 1, 2p + d + s, 4p + d - s - 1 (d = 2 when
// 3 divides p, else 0, so no two passes of a stage share a slot modulo the 6-slot period),
// squeezed as in v_shape_blocks.cpp. Closed forms, per-chunk pass times, m >= 2p
// (tests/workloads/schedule_test):
//  - peak activations 2 floor((p + 4) / 3) chunks, i.e. (p + 4) / 3 micro-batches of a whole
//    stage against 1F1B's p (the paper's table: 1/3 of 1F1B);
//  - with T_F = T_B = T_W = u the step is 6 m u plus (4p - 5) u when 3 does not divide p, (4p - 7) u
//    when it does: about the paper's "2/3 of 1F1B's bubble", 4 (p - 1) u;
//  - otherwise the interlocked 6-slot steady state runs at the slowest pass (the reference README:
//    only V-Min loses throughput when F, B and W differ): with T_W <= T_F <= T_B near balance and
//    p = 4 the step is 6 m T_B + 8 T_F + 2 T_B + T_W.
#include "workloads/training/schedules/v_shape_blocks.h"

namespace fathom::workloads {
namespace {

std::vector<VShapeBlock> v_min_block(int p) {
    const int d = p % 3 == 0 ? 2 : 0;
    std::vector<VShapeBlock> out;
    for (int s = 0; s < p; ++s) out.push_back({s, 2 * p - s - 1, 2 * p + d + s, 4 * p + d - s - 1});
    return out;
}

}  // namespace

std::unique_ptr<PipelineSchedule> make_v_min() { return make_v_shape("v-min", &v_min_block); }

}  // namespace fathom::workloads
