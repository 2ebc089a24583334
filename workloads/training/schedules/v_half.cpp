// V-Half (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, section 4.2;
// reference: sail-sg/zero-bubble-pipeline-parallelism, zbv_greedy.py, "half"): the V-shape
// building block whose lifespan halves 1F1B's peak memory. Stage s of p runs micro-batch 0's F0,
// F1, B1, B0 at slots 2s, 3p - s - 2, 3p + d + 2s - 1, 6p + d - s - 2 (d = 3 for even p, else 0,
// so no two passes of a stage share a slot modulo the 6-slot period), squeezed as in
// v_shape_blocks.cpp. Closed forms, per-chunk pass times, m >= 2p (tests/workloads/schedule_test):
//  - peak activations 2 floor((p + 2) / 2) chunks, i.e. (p + 2) / 2 micro-batches of a whole
//    stage against 1F1B's p (the paper's table: 1/2 of 1F1B);
//  - with T_F = T_B = T_W = u the step is 6 m u plus (3p - 7) u for even p >= 4, (3p - 4) u for
//    odd p, u for p = 2: within the paper's "half of 1F1B's bubble", (p - 1)(T_F + T_B + T_W) of
//    a whole stage / 2 = 3 (p - 1) u (the squeeze recovers part of the warm-up and cool-down);
//  - near balance with T_W <= T_F <= T_B (the test bed), at p = 4 the bubble is
//    T_F + 9 T_B - 5 T_W (the order's critical path).
#include "workloads/training/schedules/v_shape_blocks.h"

namespace fathom::workloads {
namespace {

std::vector<VShapeBlock> v_half_block(int p) {
    const int d = p % 2 == 0 ? 3 : 0;
    std::vector<VShapeBlock> out;
    for (int s = 0; s < p; ++s) out.push_back({2 * s, 3 * p - s - 2, 3 * p + d + 2 * s - 1, 6 * p + d - s - 2});
    return out;
}

}  // namespace

std::unique_ptr<PipelineSchedule> make_v_half() { return make_v_shape("v-half", &v_half_block); }

}  // namespace fathom::workloads
