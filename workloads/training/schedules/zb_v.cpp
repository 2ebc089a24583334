// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 6): two model chunks
// per stage in a V (chunk 0 of stage s holds virtual stage s, chunk 1 virtual stage 2p - 1 - s, so
// stage 0 runs both the first and the last layers) and the backward split into input-gradient
// (B) and weight-gradient (W) passes. This is the handcrafted order of the paper's ZB-V figure for
// T_F = T_B = T_W (the one torch.distributed.pipelining's ScheduleZBVZeroBubble runs), not the
// reference repository's cost-aware search (sail-sg zerobubble/scheduler/zbv.py). Stage s:
//  1. 2(p - s) - 1 forwards of chunk 0; then s pairs (chunk-1 forward, chunk-0 forward);
//  2. p - s triples of chunk 1 (F, B, W): the fold, where the loss's backward starts;
//  3. the steady state: (F0 while any are left), B0, W0, F1, B1, W1, until every forward ran;
//  4. the drain: s pairs (B0, B1), then p - s pairs (B0, W0), then the held W passes (chunk 1's,
//     then chunk 0's), which fill the drain as ZB-H1's do.
// Every stage keeps 2p chunk activations alive at its peak (2(p - s) - 1 + 2s + 1 forwards before
// its first B), i.e. p micro-batches of a whole stage: 1F1B's peak on its first stage, now on
// every stage. Step, with per-chunk pass times and m >= 2p - 1: with T_F = T_B = T_W every stage
// is busy from its first forward to its last W (the paper's zero bubble: stage s only waits the
// s slots of the first forward's fill), so the step is 2m(T_F + T_B + T_W) + (p - 1) T_B; the
// same form holds near balance with T_W <= T_F <= T_B (B up to ~1.4 T_F, as in the test bed). Far
// from balance the steady state waits on its neighbours (the reason the reference searches).
#include "workloads/training/schedules/v_shape_blocks.h"

#include <algorithm>

namespace fathom::workloads {
namespace {

class ZbV final : public VPlacement {
public:
    std::vector<PipelineSlot> order(int s, int p, int, int m) const override {
        // The handcrafted order assumes at least 2p - 1 micro-batches; with fewer it is built for
        // 2p - 1 and the passes of the missing ones are left out (the reference does the same).
        const int n = std::max(2 * p - 1, m);
        std::vector<PipelineSlot> out;
        int f[2] = {0, 0}, b[2] = {0, 0}, w[2] = {0, 0};
        auto put = [&](int mb, int chunk, PassKind k) {
            if (mb < m) out.push_back({mb, chunk, k});
        };
        auto F = [&](int c) { put(f[c]++, c, PassKind::Forward); };
        auto B = [&](int c) { put(b[c]++, c, PassKind::BackwardInput); };
        auto W = [&](int c) { put(w[c]++, c, PassKind::BackwardWeight); };
        for (int i = 0; i < 2 * (p - s) - 1; ++i) F(0);
        for (int i = 0; i < s; ++i) F(1), F(0);
        for (int i = 0; i < p - s; ++i) F(1), B(1), W(1);
        while (f[1] < f[0] || f[0] < n) {
            if (f[0] < n) F(0);
            B(0), W(0);
            F(1), B(1), W(1);
        }
        for (int i = 0; i < s; ++i) B(0), B(1);
        for (int i = 0; i < p - s; ++i) B(0), W(0);
        while (w[1] < b[1]) W(1);
        while (w[0] < b[0]) W(0);
        return out;
    }

private:
    const char* name() const override { return "zb-v"; }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_zb_v() { return std::make_unique<ZbV>(); }

}  // namespace fathom::workloads
