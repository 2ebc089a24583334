// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s runs min(p-s-1, m) warm-up forwards,
// then alternates one forward and one backward, then drains the remaining backwards. Same bubble
// as GPipe, (p-1)/(m+p-1), but at most p-s micro-batches in flight on stage s.
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>

namespace fathom::workloads {
namespace {

class OneFOneB final : public PipelineSchedule {
public:
    std::vector<PipelineSlot> order(int stage, int stages, int, int microbatches) const override {
        std::vector<PipelineSlot> out;
        const int warmup = std::min(stages - stage - 1, microbatches);
        int next_f = 0, next_b = 0;
        for (; next_f < warmup; ++next_f) out.push_back({next_f, 0, PassKind::Forward});
        while (next_f < microbatches) {
            out.push_back({next_f++, 0, PassKind::Forward});
            out.push_back({next_b++, 0, PassKind::Backward});
        }
        while (next_b < microbatches) out.push_back({next_b++, 0, PassKind::Backward});
        return out;
    }
    std::string check(int, int chunks, int) const override {
        return chunks == 1 ? "" : "1f1b runs one model chunk per stage; use interleaved-1f1b for vp > 1";
    }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_one_f_one_b() { return std::make_unique<OneFOneB>(); }

}  // namespace fathom::workloads
