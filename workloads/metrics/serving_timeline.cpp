#include "workloads/metrics/serving_timeline.h"

#include <cstdint>

namespace fathom::workloads {

ServingTimeline::ServingTimeline(serving::ServingSignals& signals, std::ostream& out) : writer_(out) {
    writer_.process_name(0, "serving");
    signals.iteration.connect([this](const serving::IterationEvent& e) {
        int64_t prefill_tokens = 0;
        for (const auto& [s, c] : e.batch.prefill) prefill_tokens += c;
        writer_.complete(e.first_rank, 0, "iteration", e.start, e.end - e.start,
                         {{"prefill_tokens", prefill_tokens},
                          {"prefills", static_cast<int64_t>(e.batch.prefill.size())},
                          {"decodes", static_cast<int64_t>(e.batch.decode.size())}});
    });
    signals.iteration_done.connect([this](const serving::KvUseEvent& e) {
        writer_.counter(e.first_rank, "kv_blocks", e.t, {{"used", e.used}});
    });
}

}  // namespace fathom::workloads
