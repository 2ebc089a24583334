// Multi-step scheduling (vLLM V0 --num-scheduler-steps k, vllm-project/vllm PR #7000; 0.6.0 blog
// "Performance update": the scheduler and the input preparation run once per k decode steps): a
// decorator over the replica's policy. When the policy forms a decode-only batch, the same running
// sequences decode k - 1 more steps without going back to it, so no request is admitted and no
// prompt is prefilled until the round ends; prefill batches stay single steps. The engine's CPU
// time per iteration is paid once a round (IterationCoster spreads it over the round's steps).
// A sequence that finishes inside a round leaves it (vLLM still computes it to the round's end, a
// few wasted rows: not modelled).
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/replica_state.h"

#include <limits>

namespace fathom::workloads::serving {
namespace {

class MultiStep final : public BatchingPolicy {
public:
    MultiStep(std::unique_ptr<BatchingPolicy> base, int64_t steps) : base_(std::move(base)), steps_(steps) {}

    void form(ReplicaState& r, Batch& out) override {
        if (left_ > 0) {
            add_decodes(r, out, std::numeric_limits<int64_t>::max());
            if (!out.empty()) {
                --left_;
                return;
            }
            left_ = 0;  // every sequence of the round finished: back to the policy
        }
        base_->form(r, out);
        if (!out.decode.empty() && out.prefill.empty()) left_ = steps_ - 1;
    }
    void finished(const Sequence& s) override { base_->finished(s); }
    bool keeps_finished() const override { return base_->keeps_finished(); }

private:
    std::unique_ptr<BatchingPolicy> base_;
    int64_t steps_;
    int64_t left_ = 0;  // decode steps left in the current round
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_multi_step(std::unique_ptr<BatchingPolicy> base, int64_t steps) {
    if (steps <= 1) return base;
    return std::make_unique<MultiStep>(std::move(base), steps);
}

}  // namespace fathom::workloads::serving
