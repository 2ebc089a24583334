// DeepSpeed-FastGen Dynamic SplitFuse (Holmes et al., arXiv:2401.08671): forward passes of a
// roughly constant size. Running decodes take one token each; prompts fill the rest of the budget,
// a long prompt split into pieces of at most chunk_size tokens per pass (so several prompts
// progress together), a short one taken whole.
#include "workloads/serving/replica_state.h"

#include <algorithm>

namespace fathom::workloads::serving {
namespace {

class SplitFuse final : public BatchingPolicy {
public:
    explicit SplitFuse(const BatchingSettings& b)
        : budget_(b.max_num_batched_tokens), chunk_(std::max<int64_t>(1, b.chunk_size)) {}
    void form(ReplicaState& r, Batch& out) override {
        r.resume_swapped(out);
        const int64_t used = add_decodes(r, out, budget_);
        add_prefills(r, out, budget_ - used, chunk_, [](const Sequence&) { return true; });
    }

private:
    int64_t budget_, chunk_;
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_splitfuse_policy(const BatchingSettings& b) {
    return std::make_unique<SplitFuse>(b);
}

}  // namespace fathom::workloads::serving
