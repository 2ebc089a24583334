// Static batching (FasterTransformer, TensorRT-LLM without in-flight batching): when the replica is
// idle it takes up to max_num_seqs waiting requests, reserves KV for each one's prompt and output,
// prefills them in one iteration and decodes until the longest output is done. A sequence that has
// finished keeps its slot and is still computed (padding) until the batch ends; requests arriving
// meanwhile wait for the next batch.
#include "workloads/serving/replica_state.h"

namespace fathom::workloads::serving {
namespace {

class Static final : public BatchingPolicy {
public:
    explicit Static(const BatchingSettings&) {}
    bool keeps_finished() const override { return true; }
    void form(ReplicaState& r, Batch& out) override {
        bool active = false;
        for (Sequence* s : r.running) active = active || !s->done();
        if (!active && !r.running.empty()) {
            // The batch is over: release it.
            for (Sequence* s : r.running) {
                r.release(*s);
                s->phase = Phase::Done;
            }
            r.compact_running();
        }
        if (r.running.empty()) {
            while (r.running_count() < r.batching().max_num_seqs && r.next_admissible()) {
                Sequence* s = r.waiting.front();
                const int64_t prompt = s->prefill_target - s->computed;
                const int64_t c = r.admit_front(prompt, s->req.prompt_tokens + s->req.output_tokens);
                if (c == 0) break;
                if (c == ReplicaState::kParked) continue;  // its blocks are loading
                out.prefill.emplace_back(s, prompt);
            }
            return;
        }
        for (Sequence* s : r.running) {
            if (s->in_flight) continue;
            if (s->done()) out.padding.push_back(s);
            else if (!s->prefilling()) out.decode.push_back(s);
        }
        if (out.decode.empty()) out.padding.clear();
    }
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_static_policy(const BatchingSettings& b) { return std::make_unique<Static>(b); }

}  // namespace fathom::workloads::serving
