#pragma once
// One serving request as traffic describes it (a generator or a trace row), before any simulation.
//
// Prompt content that other requests may share sits at the start of the prompt, in this order: a
// shared-prefix group (a system prompt: `prefix_tokens` tokens identified by `prefix_group`), then
// a session's history (a multi-turn conversation: the first `session_tokens` tokens after the
// prefix are this session's earlier turns, identical to what its previous request sent and got
// back). The rest of the prompt is unique to the request. Key 0 means "none". Prefix caching
// compares prompts by these identities (the simulator never sees token ids).
#include <cstdint>

namespace fathom::workloads::serving {

// The most tokens one count of a request may hold (a trace row's, a generator's draw): 2^53, so
// sums of a request's counts never overflow and each is exact as a double.
constexpr int64_t kMaxRequestTokens = int64_t{1} << 53;

struct Request {
    int64_t id = 0;             // 0, 1, 2, ... in arrival order
    double arrival_s = 0;       // open loop: arrival time; closed loop: set by the simulator
    int64_t prompt_tokens = 0;  // includes prefix_tokens and session_tokens
    int64_t output_tokens = 0;  // tokens to generate (the first one included)
    uint64_t prefix_group = 0;
    int64_t prefix_tokens = 0;
    uint64_t session = 0;
    int64_t session_tokens = 0;
    int32_t slo_class = 0;  // index into the source's SLO class names (0 = default)
    // Multi-LoRA serving (lora.h): the adapter it runs with, 1..serving.lora.adapters, 0 the base
    // model; -1: not stated (generated traffic, a trace without the column), drawn when LoRA is on.
    int32_t adapter = -1;
    int32_t line = 0;  // a trace's request: its line in the file (refusals name it); 0: generated
};

}  // namespace fathom::workloads::serving
