// Sarathi-Serve (Agrawal et al., OSDI 2024): stall-free batching. Every iteration first takes one
// token of each running decode, then fills the rest of the token budget (max_num_batched_tokens)
// with prompt chunks: running prefills first, then new requests in arrival order, the last chunk
// cut to the budget. Decodes never wait behind a long prompt. vLLM's V1 scheduler and SGLang's
// chunked prefill compose batches this way.
#include "workloads/serving/replica_state.h"

namespace fathom::workloads::serving {
namespace {

class Sarathi final : public BatchingPolicy {
public:
    explicit Sarathi(const BatchingSettings& b) : budget_(b.max_num_batched_tokens) {}
    void form(ReplicaState& r, Batch& out) override {
        r.resume_swapped(out);
        const int64_t used = add_decodes(r, out, budget_);
        add_prefills(r, out, budget_ - used, budget_, [](const Sequence&) { return true; });
    }

private:
    int64_t budget_;
};

}  // namespace

std::unique_ptr<BatchingPolicy> make_sarathi_policy(const BatchingSettings& b) { return std::make_unique<Sarathi>(b); }

}  // namespace fathom::workloads::serving
