#pragma once
// A request while a replica serves it: its progress through prefill and decode, the KV blocks it
// holds, and the times the metrics need.
//
// Invariants: `computed` tokens have their keys and values in the KV cache; a prefill computes
// tokens until computed == prefill_target and then samples a token; a decode step computes the KV
// of the last sampled token (attending to computed + 1 keys) and samples the next. So while
// decoding, computed = prompt + generated - 1. A sequence preempted by recomputation drops its KV
// and is prefilled again over prompt + generated tokens (vLLM's recompute preemption).
#include "sim/time.h"
#include "workloads/serving/request.h"

#include <cstdint>
#include <vector>

namespace fathom::workloads::serving {

// Loading: admitted with blocks found in an offload tier that an asynchronous load is copying in
// (KvSettings::offload_load "async"); it waits beside the queue until they are in.
enum class Phase : uint8_t { Waiting, Loading, Running, Swapped, Transferring, Done };

inline constexpr sim::Time kNever = sim::Time::max();  // an event that has not happened

struct Sequence {
    // The fields every iteration reads and writes, first: with the request after them, a batch's
    // pass over its sequences touches two cache lines of each instead of four.
    Phase phase = Phase::Waiting;
    bool in_flight = false;      // in a batch that has not completed yet
    bool padding = false;        // static batching: finished, still computed until the batch ends
    bool holds_adapter = false;  // multi-LoRA: counted as a user of its adapter's GPU slot
    int32_t preemptions = 0;
    int64_t prefill_target = 0;  // tokens to compute before sampling (prompt, or prompt + generated)
    int64_t computed = 0;
    int64_t generated = 0;
    int64_t kv_blocks = 0;      // private blocks held
    int64_t cached_blocks = 0;  // prefix-cache blocks referenced (the first ones of `block_ids`)
    // Times on the engine's clock (metric collectors convert them to seconds).
    sim::Time first_token = kNever;
    sim::Time last_token = kNever;
    Request req;
    std::vector<uint64_t> block_ids;  // identities of its shareable blocks (prefix caching only)
    int64_t hit_tokens = 0;           // prompt tokens found in the prefix cache at first admission
    int64_t offload_hit_tokens = 0;   // of the prompt after them, tokens loaded back from the offload tiers
    int64_t ssd_hit_tokens = 0;       // of those, from the NVMe tier
    int64_t store_hit_tokens = 0;     // of those, from the store the replicas share
    int32_t replica = -1;             // where it was prefilled (aggregated: served)
    int32_t decode_replica = -1;      // disaggregated: where it is decoded
    uint64_t admit_order = 0;         // admission sequence number on its replica (preempt the newest)
    sim::Time arrival;
    sim::Time scheduled = kNever;    // first time a batch included it for a prefill
    sim::Time kv_sent, kv_received;  // disaggregated: its KV left the prefill replica, reached the decode one

    bool prefilling() const { return computed < prefill_target; }
    bool done() const { return generated >= req.output_tokens; }
    int64_t kv_tokens() const { return computed; }
};

// A reply's time per output token after the first, from its first token at `first_s` to its last at
// `end_s`; -1 for a one-token reply (it has none, and meets any TPOT target).
inline double tpot_seconds(int64_t output_tokens, double first_s, double end_s) {
    return output_tokens > 1 ? (end_s - first_s) / static_cast<double>(output_tokens - 1) : -1;
}

}  // namespace fathom::workloads::serving
