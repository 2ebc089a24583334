// Orca (Yu et al., OSDI 2022): iteration-level scheduling. Every iteration runs one token of each
// running sequence and the whole prompts of newly admitted requests (selective batching), up to
// max_num_seqs and the token budget. Orca allocates KV for max_model_len tokens per request at
// admission (no paging), so it never preempts, and its batch is limited by that reservation.
#include "workloads/serving/replica_state.h"

#include <algorithm>

namespace fathom::workloads::serving {
namespace {

class Orca final : public BatchingPolicy {
public:
    explicit Orca(const BatchingSettings& b) : budget_(b.max_num_batched_tokens), max_len_(b.max_model_len) {}
    void form(ReplicaState& r, Batch& out) override {
        const int64_t decodes = add_decodes(r, out, r.batching().max_num_seqs);
        int64_t used = decodes;
        int64_t running = r.running_count();
        while (running < r.batching().max_num_seqs && r.next_admissible()) {
            Sequence* s = r.waiting.front();
            const int64_t prompt = s->prefill_target - s->computed;
            if (used > 0 && used + prompt > budget_) break;
            const int64_t reserve = std::max(max_len_, s->req.prompt_tokens + s->req.output_tokens);
            const int64_t c = r.admit_front(prompt, reserve);
            if (c == 0) break;
            if (c == ReplicaState::kParked) continue;  // its blocks are loading
            out.prefill.emplace_back(s, c);
            used += c;
            ++running;
        }
    }

private:
    int64_t budget_, max_len_;
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_orca_policy(const BatchingSettings& b) { return std::make_unique<Orca>(b); }

}  // namespace fathom::workloads::serving
