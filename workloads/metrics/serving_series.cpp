#include "workloads/metrics/serving_series.h"

namespace fathom::workloads {

void ServingSeries::attach(serving::ServingSignals& signals, std::vector<int64_t> kv_capacity) {
    kv_capacity_ = std::move(kv_capacity);
    signals.iteration.connect([this](const serving::IterationEvent& e) {
        Iteration it;
        it.start_s = e.start.seconds();
        it.end_s = e.end.seconds();
        it.replica = e.replica;
        it.prefills = static_cast<int32_t>(e.batch.prefill.size());
        it.decodes = static_cast<int32_t>(e.batch.decode.size());
        for (const auto& [s, c] : e.batch.prefill) it.prefill_tokens += c;
        iterations_.push_back(it);
    });
    signals.iteration_done.connect([this](const serving::KvUseEvent& e) {
        kv_.push_back({e.t.seconds(), e.replica, e.used});
    });
    signals.next_tokens.connect([this](const serving::TokensEvent& e) {
        if (!e.tokens.empty()) tokens_.push_back({e.t.seconds(), static_cast<int64_t>(e.tokens.size())});
    });
    signals.finished.connect([this](const serving::Sequence& s, sim::Time) {
        if (s.first_token != serving::kNever) tokens_.push_back({s.first_token.seconds(), 1});
    });
}

}  // namespace fathom::workloads
