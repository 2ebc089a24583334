#include "workloads/serving/batching/policy.h"

#include "workloads/serving/replica_state.h"

#include <algorithm>

namespace fathom::workloads::serving {

const PolicyRegistry& policy_registry() {
    static const PolicyRegistry r = [] {
        PolicyRegistry reg("batching policy");
        reg.add("static", "FasterTransformer static batching: a batch runs to its longest output", make_static_policy);
        reg.add("orca", "Orca iteration-level batching: whole prompts join decodes; KV reserved for max_model_len",
                make_orca_policy);
        reg.add("vllm", "vLLM V0: paged KV, prefill-first iterations, preemption on KV exhaustion", make_vllm_policy);
        reg.add("sarathi", "Sarathi-Serve: stall-free chunked prefill under a token budget (vLLM V1, SGLang)",
                make_sarathi_policy);
        reg.add("splitfuse",
                "DeepSpeed-FastGen Dynamic SplitFuse: prompts split into chunk_size pieces fill the budget",
                make_splitfuse_policy);
        reg.add("past-future", "LightLLM Past-Future: admission by predicted peak KV from past output lengths",
                make_past_future_policy);
        return reg;
    }();
    return r;
}

int64_t add_decodes(ReplicaState& r, Batch& out, int64_t max_tokens) {
    int64_t used = 0;
    // Index loop: preemption changes phases, never the vector.
    for (size_t i = 0; i < r.running.size() && used < max_tokens; ++i) {
        Sequence* s = r.running[i];
        if (s->phase != Phase::Running || s->in_flight || s->prefilling() || s->done()) continue;
        bool ok = true;
        while (!r.grow(*s, s->computed + 1 + r.lookahead())) {
            Sequence* victim = r.newest_running();
            if (!victim) {
                ok = false;
                break;
            }
            // The victim is never already in the batch: it is at least as new as s, and prefills
            // are added after decodes.
            r.preempt(*victim, out);
            if (victim == s) {
                ok = false;
                break;
            }
        }
        if (!ok) continue;
        out.decode.push_back(s);
        used += 1 + r.lookahead();
    }
    return used;
}

int64_t add_prefills(ReplicaState& r, Batch& out, int64_t budget, int64_t chunk,
                     const std::function<bool(const Sequence&)>& may_admit) {
    int64_t used = 0;
    for (size_t i = 0; i < r.running.size() && used < budget; ++i) {
        Sequence* s = r.running[i];
        if (s->phase != Phase::Running || s->in_flight || !s->prefilling()) continue;
        const int64_t c = std::min({s->prefill_target - s->computed, chunk, budget - used});
        if (!r.grow(*s, s->computed + c)) break;
        out.prefill.emplace_back(s, c);
        used += c;
    }
    int64_t running = r.running_count();
    while (used < budget && running < r.batching().max_num_seqs && r.swapped.empty() && r.next_admissible()) {
        Sequence* s = r.waiting.front();
        if (!may_admit(*s)) break;
        const int64_t c = r.admit_front(std::min(chunk, budget - used));
        if (c == 0) break;
        if (c == ReplicaState::kParked) continue;  // its blocks are loading: the next one
        out.prefill.emplace_back(s, c);
        used += c;
        ++running;
    }
    return used;
}

}  // namespace fathom::workloads::serving
