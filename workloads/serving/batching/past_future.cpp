// Past-Future scheduling (LightLLM; Gong et al., "Past-Future Scheduler for LLM Serving under SLA
// Guarantees", ASPLOS 2025): token-budget batching as Sarathi-Serve, but a waiting request is
// admitted only when the predicted peak KV occupancy of the running sequences and the newcomer fits
// the cache. Each sequence's remaining output is predicted from the output lengths of the requests
// completed so far (the past): the mean of those longer than what it has generated, capped by its
// max_tokens (the request's output length, which clients send); until enough requests completed,
// the cap itself. Occupancy over the future is then sum_i (kv_i + min(t, rem_i)) over the
// sequences still running at t, whose peak is at one of the predicted finish times.
#include "workloads/serving/replica_state.h"

#include <algorithm>
#include <map>

namespace fathom::workloads::serving {
namespace {

constexpr int kMinHistory = 32;  // completed requests before the past is trusted

class PastFuture final : public BatchingPolicy {
public:
    explicit PastFuture(const BatchingSettings& b) : budget_(b.max_num_batched_tokens) {}

    void finished(const Sequence& s) override {
        ++history_[s.req.output_tokens];
        ++completed_;
    }

    void form(ReplicaState& r, Batch& out) override {
        r.resume_swapped(out);
        const int64_t used = add_decodes(r, out, budget_);
        add_prefills(r, out, budget_ - used, budget_, [&](const Sequence& s) { return fits(r, s); });
    }

private:
    // Predicted tokens still to generate for a sequence that has generated `g` of at most `cap`.
    double remaining(int64_t g, int64_t cap) const {
        if (completed_ < kMinHistory) return static_cast<double>(cap - g);
        double n = 0, sum = 0;
        for (auto it = history_.upper_bound(g); it != history_.end(); ++it) {
            n += static_cast<double>(it->second);
            sum += static_cast<double>(it->second) * static_cast<double>(std::min(it->first, cap));
        }
        const double expect = n > 0 ? sum / n : static_cast<double>(cap);
        return std::max(1.0, std::min(static_cast<double>(cap), expect) - static_cast<double>(g));
    }

    bool fits(const ReplicaState& r, const Sequence& cand) {
        future_.clear();
        for (const Sequence* s : r.running) {
            if (s->phase != Phase::Running) continue;
            const double kv = static_cast<double>(std::max(s->computed, s->prefill_target));
            future_.emplace_back(remaining(s->generated, s->req.output_tokens), kv);
        }
        future_.emplace_back(remaining(cand.generated, cand.req.output_tokens),
                             static_cast<double>(cand.prefill_target));
        // Peak of M(t) = sum over {i: rem_i >= t} of (kv_i + t), evaluated at each finish time,
        // in blocks (plus one partly filled block per sequence).
        std::sort(future_.begin(), future_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        const double bs = static_cast<double>(r.kv().block_size());
        double kv_sum = 0, peak = 0, n = 0;
        for (const auto& [rem, kv] : future_) {
            kv_sum += kv;
            n += 1;
            peak = std::max(peak, (kv_sum + n * rem) / bs + n);
        }
        const double limit = static_cast<double>(r.kv().capacity()) * (1.0 - r.kv_settings().watermark);
        return peak <= limit;
    }

    int64_t budget_;
    std::map<int64_t, int64_t> history_;  // output length -> completed requests
    int64_t completed_ = 0;
    std::vector<std::pair<double, double>> future_;
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_past_future_policy(const BatchingSettings& b) {
    return std::make_unique<PastFuture>(b);
}

}  // namespace fathom::workloads::serving
