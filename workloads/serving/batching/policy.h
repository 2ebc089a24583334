#pragma once
// Batching policies: which sequences run in a replica's next iteration, and how many prompt tokens
// each prefills. One policy per file, behind BatchingPolicy, registered by name:
//   static       FasterTransformer: a batch runs from its prefill to its longest output; requests
//                arriving meanwhile wait, finished ones are still computed (padding)
//   orca         Orca iteration-level batching: whole prompts join the running decodes every
//                iteration; KV reserved for max_model_len at admission (no paging, no preemption)
//   vllm         vLLM (V0 default): paged KV, prefill-first iterations (prefill-only batches while
//                requests wait and fit), decode batches otherwise, preemption on KV exhaustion
//   sarathi      Sarathi-Serve: stall-free chunked prefill under a token budget (decodes first,
//                then prefill chunks filling the budget); vLLM V1 and SGLang schedule this way
//   splitfuse    DeepSpeed-FastGen Dynamic SplitFuse: decodes, then prompts composed to fill the
//                budget, each long prompt split into chunks of at most chunk_size
//   past-future  LightLLM Past-Future: token-budget batching whose admission predicts the peak
//                future KV occupancy from the output lengths seen so far, so preemptions are rare
//
// Policies see the replica through ReplicaState (admission, KV growth, preemption); the replica
// executes the batch and applies its results.
#include "sim/registry.h"
#include "workloads/serving/serving_plan.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace fathom::workloads::serving {

struct Sequence;
class ReplicaState;

struct Batch {
    std::vector<std::pair<Sequence*, int64_t>> prefill;  // sequence, prompt tokens this iteration
    std::vector<Sequence*> decode;
    std::vector<Sequence*> padding;  // static batching: finished, still computed
    double swap_bytes = 0;           // KV moved between device and host (per device)

    bool empty() const { return prefill.empty() && decode.empty(); }
    void clear() {
        prefill.clear();
        decode.clear();
        padding.clear();
        swap_bytes = 0;
    }
};

class BatchingPolicy {
public:
    virtual ~BatchingPolicy() = default;
    // Fills `out` (empty: nothing to run now) from the replica's queues; sequences in flight (in a
    // batch of another pipeline slot) are never chosen.
    virtual void form(ReplicaState& r, Batch& out) = 0;
    // A sequence finished on this replica (policies that learn from completed requests).
    virtual void finished(const Sequence&) {}
    // True when finished sequences keep their KV and slot until the policy releases them (static).
    virtual bool keeps_finished() const { return false; }
};

using PolicyFactory = std::unique_ptr<BatchingPolicy> (*)(const BatchingSettings&);
using PolicyRegistry = sim::Registry<PolicyFactory>;
const PolicyRegistry& policy_registry();

std::unique_ptr<BatchingPolicy> make_static_policy(const BatchingSettings&);
std::unique_ptr<BatchingPolicy> make_orca_policy(const BatchingSettings&);
std::unique_ptr<BatchingPolicy> make_vllm_policy(const BatchingSettings&);
std::unique_ptr<BatchingPolicy> make_sarathi_policy(const BatchingSettings&);
std::unique_ptr<BatchingPolicy> make_splitfuse_policy(const BatchingSettings&);
std::unique_ptr<BatchingPolicy> make_past_future_policy(const BatchingSettings&);
// Multi-step scheduling over `base` (batching/multi_step.cpp): a decode-only batch runs `steps`
// iterations before the policy is asked again; `steps` <= 1 returns `base` itself.
std::unique_ptr<BatchingPolicy> make_multi_step(std::unique_ptr<BatchingPolicy> base, int64_t steps);

// Building blocks the token-budget policies share (batching/policy.cpp).
// Every running decode (admission order) joins with one token, growing its KV by a block when it
// needs one; when none is free, the newest running sequence is preempted (possibly itself).
// Returns the tokens used.
int64_t add_decodes(ReplicaState& r, Batch& out, int64_t max_tokens);
// Running prefills continue, then waiting requests are admitted (FCFS while `may_admit` agrees and
// max_num_seqs allows), each with at most `chunk` prompt tokens and what is left of `budget`;
// returns the tokens used.
int64_t add_prefills(ReplicaState& r, Batch& out, int64_t budget, int64_t chunk,
                     const std::function<bool(const Sequence&)>& may_admit);

}  // namespace fathom::workloads::serving
