// Breadth-first pipeline (Lamy-Poirier, "Breadth-First Pipeline Parallelism", MLSys 2023): the
// looping placement of interleaved 1F1B (chunk c of stage s holds virtual stage c x p + s), run
// breadth first: every micro-batch through the stage's first chunk, then its second, ..., then
// the backwards chunk by chunk in reverse (GPipe's order within each chunk). With m >= p micro-
// batches a stage never waits between chunks, so the step is (v m + p - 1)(T_F + T_B) / v and the
// bubble (p - 1) / (v m + p - 1), interleaving's, while each chunk's gradients are complete as
// early as possible for the data-parallel reduction to overlap the rest of the backward; the cost
// is memory: all v m chunk activations are alive at the peak.
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::workloads {
namespace {

class BreadthFirst final : public PipelineSchedule {
public:
    std::vector<PipelineSlot> order(int, int, int chunks, int microbatches) const override {
        std::vector<PipelineSlot> out;
        for (int c = 0; c < chunks; ++c)
            for (int m = 0; m < microbatches; ++m) out.push_back({m, c, PassKind::Forward});
        for (int c = chunks - 1; c >= 0; --c)
            for (int m = microbatches - 1; m >= 0; --m) out.push_back({m, c, PassKind::Backward});
        return out;
    }
    std::string check(int, int, int) const override { return ""; }
};

}  // namespace

std::unique_ptr<PipelineSchedule> make_breadth_first() { return std::make_unique<BreadthFirst>(); }

}  // namespace fathom::workloads
