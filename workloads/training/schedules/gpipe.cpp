// GPipe: every micro-batch's forward, then every backward in reverse order. Bubble (p-1)/(m+p-1),
// all m micro-batches' activations alive at the peak.
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::workloads {
namespace {

class GPipe final : public PipelineSchedule {
public:
    std::vector<PipelineSlot> order(int, int, int chunks, int microbatches) const override {
        std::vector<PipelineSlot> out;
        for (int m = 0; m < microbatches; ++m)
            for (int c = 0; c < chunks; ++c) out.push_back({m, c, PassKind::Forward});
        for (int m = microbatches - 1; m >= 0; --m)
            for (int c = chunks - 1; c >= 0; --c) out.push_back({m, c, PassKind::Backward});
        return out;
    }
    std::string check(int, int chunks, int) const override {
        return chunks == 1 ? "" : "gpipe runs one model chunk per stage (vp = 1)";
    }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_gpipe() { return std::make_unique<GPipe>(); }

}  // namespace fathom::workloads
