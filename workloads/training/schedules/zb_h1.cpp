// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 3.1): 1F1B with each
// backward split into its input-gradient pass (B, what the previous stage waits for) and its
// weight-gradient pass (W, which nothing waits for). Stage i runs 1F1B's warm-up and steady
// state with B in place of the whole backward and keeps its W passes up to i behind: the later a
// stage, the more W passes it holds back, and those fill the drain, where earlier stages still
// run their last B passes. With F, B and W of equal cost the bubble shrinks from 1F1B's
// (p-1)(T_F + T_B + T_W) to (p-1)(T_F + T_B - T_W); in-flight activations (counted by forwards
// whose B has not run) stay at 1F1B's, p - i on stage i.
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>
#include <deque>

namespace fathom::workloads {
namespace {

class ZbH1 final : public PipelineSchedule {
public:
    std::vector<PipelineSlot> order(int stage, int stages, int, int microbatches) const override {
        std::vector<PipelineSlot> out;
        std::deque<int> pending;  // micro-batches whose W has not run
        auto weight = [&](size_t keep) {
            while (pending.size() > keep) {
                out.push_back({pending.front(), 0, PassKind::BackwardWeight});
                pending.pop_front();
            }
        };
        auto backward = [&](int mb) {
            out.push_back({mb, 0, PassKind::BackwardInput});
            pending.push_back(mb);
            weight(static_cast<size_t>(stage));
        };
        const int warmup = std::min(stages - stage - 1, microbatches);
        int next_f = 0, next_b = 0;
        for (; next_f < warmup; ++next_f) out.push_back({next_f, 0, PassKind::Forward});
        while (next_f < microbatches) {
            out.push_back({next_f++, 0, PassKind::Forward});
            backward(next_b++);
        }
        while (next_b < microbatches) backward(next_b++);
        weight(0);
        return out;
    }
    std::string check(int, int chunks, int) const override {
        return chunks == 1 ? "" : "zb-h1 runs one model chunk per stage";
    }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_zb_h1() { return std::make_unique<ZbH1>(); }

}  // namespace fathom::workloads
