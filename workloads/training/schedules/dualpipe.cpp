// DualPipe (DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, section 3.2.1, and the
// reference implementation deepseek-ai/DualPipe, dualpipe/dualpipe.py): a bidirectional pipeline.
// Each of the p (even) ranks holds two chunks: chunk 0 is its stage of the forward direction
// (virtual stage s of route 0, fed at rank 0) and chunk 1 its stage of the reverse direction
// (virtual stage p + (p - 1 - s) of route 1, fed at rank p - 1): two copies of the model's
// parameters. Half of the m micro-batches travel each route. Each rank runs the eight steps of the
// reference implementation: forwards of its nearer direction (nF0), alternating forwards (nF0F1),
// zero-bubble backwards of the first-finished direction (nB1W1F1), the steady state of
// forward-backward pairs (nF0B1F1B0), then the drain (nB1F1B0, nB1B0, nWB0, nW) with weight passes
// deferred into it. A pair starts once both its inputs have arrived; DeepSeek overlaps the EP
// all-to-alls of one with the other's compute, which the replay models only through the stack's
// ep_comm_overlap (set it with this schedule; compare does), and then for every pass.
// Bubble (the report's Table 2): (p/2 - 1)(T_F&B + T_B - 3 T_W); parameters 2x; activations p + 1.
// The two copies of a stage are data-parallel replicas of each other: their gradients are summed
// over 2 dp ranks, which the replay prices as the reduction over the dp group (a ring's per-rank
// traffic differs by 1/(2 dp) of the bytes).
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>
#include <deque>
#include <string>

namespace fathom::workloads {
namespace {

class DualPipe final : public PipelineSchedule {
public:
    std::vector<PipelineSlot> order(int rank, int stages, int, int microbatches) const override {
        const int P = stages, H = microbatches / 2, half = P / 2;
        const int half_rank = std::min(rank, P - 1 - rank);
        const bool second_half = rank >= half;
        const bool middle = rank == half - 1 || rank == half;
        std::vector<PipelineSlot> out;
        int next_f[2] = {0, 0}, next_b[2] = {0, 0};
        std::deque<PipelineSlot> deferred;  // input-gradient passes whose weight pass has not run
        // `phase` as in the reference: 0 is the rank's nearer direction (route 0 on the first half
        // of the ranks, route 1 on the second); the chunk index is the route.
        auto route = [&](int phase) { return phase ^ (second_half ? 1 : 0); };
        auto F = [&](int phase, bool paired = false) {
            const int d = route(phase);
            out.push_back({d * H + next_f[d]++, d, PassKind::Forward, paired});
        };
        auto B = [&](int phase, bool zero_bubble) {
            const int d = route(phase), mb = d * H + next_b[d]++;
            if (!zero_bubble) {
                out.push_back({mb, d, PassKind::Backward});
                return;
            }
            out.push_back({mb, d, PassKind::BackwardInput});
            deferred.push_back({mb, d, PassKind::BackwardWeight});
        };
        auto W = [&] {
            out.push_back(deferred.front());
            deferred.pop_front();
        };
        for (int i = 0; i < (half - half_rank - 1) * 2; ++i) F(0);  // 1: nF0
        for (int i = 0; i < half_rank + 1; ++i) F(0), F(1);         // 2: nF0F1
        for (int i = 0; i < half - half_rank - 1; ++i) {            // 3: nB1W1F1
            B(1, true);
            W();
            F(1);
        }
        // 4: nF0B1F1B0, pairs of a forward and a backward (the middle ranks run their first pair
        // as a forward and then a backward, not overlapped, "to further reduce bubble size").
        for (int i = 0; i < H - P + half_rank + 1; ++i) {
            F(0, !(i == 0 && middle)), B(1, false);
            F(1, true), B(0, false);
        }
        for (int i = 0; i < half - half_rank - 1; ++i) {  // 5: nB1F1B0
            B(1, false);
            F(1, true), B(0, false);
        }
        // 6: nB1B0, the second half of it deferring weight passes.
        bool zero_bubble = false;
        const int step6 = half_rank + 1;
        for (int i = 0; i < step6; ++i) {
            if (i == step6 / 2 && half_rank % 2 == 1) zero_bubble = true;
            B(1, zero_bubble);
            if (i == step6 / 2 && half_rank % 2 == 0) zero_bubble = true;
            B(0, zero_bubble);
        }
        for (int i = 0; i < half - half_rank - 1; ++i) {  // 7: nWB0
            W();
            B(0, true);
        }
        while (!deferred.empty()) W();  // 8: nW
        return out;
    }

    std::string check(int stages, int chunks, int microbatches) const override {
        if (chunks != 2) return "dualpipe holds two chunks per stage (vp = 2: the stage of each direction)";
        if (stages < 2 || stages % 2 != 0) return "dualpipe needs an even number of pipeline stages";
        if (microbatches % 2 != 0 || microbatches < 2 * stages)
            return "dualpipe needs an even number of micro-batches, at least 2 x pp = " + std::to_string(2 * stages) +
                   " (got " + std::to_string(microbatches) + ")";
        return "";
    }

    std::string check_key(int stages, int chunks, int) const override {
        if (chunks != 2) return "parallel.vp";
        if (stages < 2 || stages % 2 != 0) return "parallel.pp";
        return "training.global_batch_size";  // the micro-batch count
    }

    int virtual_stage(int stage, int chunk, int stages, int) const override {
        return chunk == 0 ? stage : stages + (stages - 1 - stage);
    }

    int routes() const override { return 2; }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_dualpipe() { return std::make_unique<DualPipe>(); }

}  // namespace fathom::workloads
