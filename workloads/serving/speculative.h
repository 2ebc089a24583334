#pragma once
// Speculative decoding (papers.md F23): a cheap drafter proposes `tokens` (k) tokens after each
// decode's last one, and the target model verifies them in one forward pass of k + 1 queries per
// sequence (a prefill-like chunk over its KV cache). The longest prefix of drafts the target agrees
// with is kept, plus the target's own next token, so a verification emits 1 to k + 1 tokens.
//
// The model, as the engines run it (vLLM's spec_decode, SGLang's EAGLE worker):
//  - Drafters: `draft` a smaller model of the catalog (k decode steps of it, at the pool's TP);
//    `eagle` an EAGLE/EAGLE-3 head and `mtp` a multi-token-prediction module (DeepSeek-V3), each
//    priced as one decoder layer of the target's shape plus its output head, run k times; `ngram`
//    prompt lookup on the CPU (no GPU time).
//  - Acceptance: each draft token is accepted with probability `acceptance` given that the ones
//    before it were (the i.i.d. model of Leviathan et al., ICML 2023), so a verification emits
//    (1 - a^(k+1)) / (1 - a) tokens on average; or give the published mean acceptance length
//    (tokens a verification emits), which fixes a. Draws are a function of the request, the
//    position and the scenario's seed, so a request's tokens per step do not depend on the batch
//    it runs in.
//  - KV: every decode holds slots for its k + 1 verified tokens (vLLM's lookahead slots); rejected
//    drafts' slots are reused by the next verification, never freed early.
//  - The batch's token budget counts k + 1 tokens a decode (vLLM's scheduler does).
#include "sim/enum_names.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fathom::models {
struct ModelSpec;
}

namespace fathom::workloads::serving {

enum class SpecMethod { None, Draft, Eagle, Mtp, Ngram };
constexpr auto enum_names(SpecMethod) {
    return sim::name_table<SpecMethod>({{SpecMethod::None, "none"},
                                        {SpecMethod::Draft, "draft"},
                                        {SpecMethod::Eagle, "eagle"},
                                        {SpecMethod::Mtp, "mtp"},
                                        {SpecMethod::Ngram, "ngram"}});
}

struct SpeculativeSettings {
    SpecMethod method = SpecMethod::None;
    int tokens = 0;                // k: drafts a verification checks
    double acceptance = -1;        // a: a draft's acceptance given the ones before it; -1: not given
    double acceptance_length = 0;  // or the mean tokens a verification emits (1 .. k + 1); 0: not given
    std::string draft_model;       // method draft: its catalog id
    // Or a measured profile (workloads/acceptance/): per draft position, the share of verifications
    // that accepted it (it counts the positions before it, so the values do not rise); resolved from
    // acceptance_profile by the scenario loader.
    std::string acceptance_profile;
    std::vector<double> positions;
    // The engine's own time around the drafter (CPU work, sampling, launches): once an iteration
    // that speculates, and once a draft step (engine presets; 0: none).
    double iteration_overhead_s = 0;
    double step_overhead_s = 0;
    std::shared_ptr<const models::ModelSpec> draft;  // resolved from draft_model by the scenario loader

    bool enabled() const { return method != SpecMethod::None && tokens > 0; }
    // The per-draft acceptance the settings give (from acceptance_length when that is given; with a
    // profile, the rate giving its mean length).
    double rate() const;
    // Mean tokens a verification emits: 1 + the profile's first k positions, or expected_tokens.
    double mean_tokens() const;
};

// Mean tokens one verification emits with k drafts accepted at rate a each: (1 - a^(k+1)) / (1 - a).
double expected_tokens(double a, int k);
// The rate a whose expected_tokens(a, k) is `length` (1 <= length <= k + 1), by bisection.
double rate_for_length(double length, int k);
// Drafts accepted (0..k) for the request `request`'s verification at output position `position`:
// a deterministic draw from (seed, request, position).
int accepted_drafts(double a, int k, uint64_t seed, int64_t request, int64_t position);
// The same with a profile of per-position shares p (draft i accepted, given the ones before it were,
// with probability p[i] / p[i - 1]).
int accepted_drafts(const std::vector<double>& p, int k, uint64_t seed, int64_t request, int64_t position);

}  // namespace fathom::workloads::serving
