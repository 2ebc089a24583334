// vLLM's V0 scheduler without chunked prefill (Kwon et al., SOSP 2023; vllm/core/scheduler.py
// _schedule_default): swapped sequences resume first; then, while requests wait and their whole
// prompts fit the token budget, the free KV blocks above the watermark and max_num_seqs, an
// iteration prefills only new prompts (prefill first); otherwise it decodes every running
// sequence, preempting the newest (recompute or swap) when a decode finds no free block.
#include "workloads/serving/replica_state.h"

namespace fathom::workloads::serving {
namespace {

class Vllm final : public BatchingPolicy {
public:
    explicit Vllm(const BatchingSettings& b) : budget_(b.max_num_batched_tokens) {}
    void form(ReplicaState& r, Batch& out) override {
        r.resume_swapped(out);
        if (out.swap_bytes == 0 && r.swapped.empty()) {
            int64_t used = 0;
            int64_t running = r.running_count();
            while (running < r.batching().max_num_seqs && r.next_admissible()) {
                Sequence* s = r.waiting.front();
                const int64_t prompt = s->prefill_target - s->computed;
                // Whole prompts only; a prompt longer than the budget runs alone.
                if (used > 0 && used + prompt > budget_) break;
                const int64_t c = r.admit_front(prompt);
                if (c == 0) break;
                if (c == ReplicaState::kParked) continue;  // its blocks are loading
                out.prefill.emplace_back(s, c);
                used += c;
                ++running;
            }
            if (!out.prefill.empty()) return;
        }
        add_decodes(r, out, r.batching().max_num_seqs);
    }

private:
    int64_t budget_;
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_vllm_policy(const BatchingSettings& b) { return std::make_unique<Vllm>(b); }

}  // namespace fathom::workloads::serving
