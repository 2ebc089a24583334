#pragma once
// One iteration's rollout batch: the prompts' lengths and their answers' lengths, drawn from the
// plan's distributions (streams "rl.prompt" and "rl.response", keyed by the seed and the
// iteration, so the same scenario and seed give bit-identical batches), the requests a rollout
// engine serves for it, and the sequences the trainer updates on.
#include "workloads/lengths/length_distribution.h"
#include "workloads/rl/rl_plan.h"
#include "workloads/serving/traffic/traffic.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace fathom::workloads::rl {

struct RolloutBatch {
    int64_t samples = 1;
    std::vector<int64_t> prompt;    // tokens of each prompt
    std::vector<int64_t> response;  // tokens of each answer, prompt-major: answer s of prompt p at p x samples + s

    int64_t prompts() const { return static_cast<int64_t>(prompt.size()); }
    int64_t answers() const { return static_cast<int64_t>(response.size()); }
    int64_t response_tokens() const;
    // Tokens the trainer runs: every answer after its own copy of the prompt, N (P + R) per group;
    // or, with the prompt shared (DualKV), P + N R per group.
    int64_t train_tokens(bool shared_prompt) const;
    // DualKV's reduction factor rho = N (P + R) / (P + N R), over the whole batch.
    double shared_prompt_reduction() const {
        return static_cast<double>(train_tokens(false)) / static_cast<double>(train_tokens(true));
    }
    // The lengths of the documents the trainer packs (training.documents), one entry per document.
    // Unshared: each answer with its prompt, P + R. Shared: the same tokens, P + N R per group,
    // split into attention-equivalent documents: the shared-prompt kernel attends every answer to
    // the prompt and to itself, causal(P) + sum_i (R_i P + causal(R_i)) key-query pairs (causal(n) =
    // n^2 / 2); the group is cut into causal documents with as many pairs: the prompt with the
    // first answers grown onto it while its pairs stay within that sum, the next answer split so
    // that they match, the other answers alone. Tokens are exact, pairs to rounding; which tokens
    // attend to which is not (an estimate of the kernel's work, not of its layout).
    std::vector<int64_t> documents(bool shared_prompt) const;
};

// Draws iteration `iteration`'s batch.
RolloutBatch draw_rollout_batch(const RlSettings& rl, uint64_t seed, int iteration);
// `a` and `b` as one batch (a's prompts, then b's), of the same samples per prompt.
RolloutBatch joined(const RolloutBatch& a, const RolloutBatch& b);

// The batch as serving requests, all arriving at time 0, prompt-major (the answers of one prompt
// consecutive, as an engine given n = samples fans them out): each answer's prompt is its group's
// shared prefix (prefix_group p + 1, the whole prompt), so a prefix-caching engine prefills it
// once per replica.
std::unique_ptr<serving::RequestSource> rollout_source(const RolloutBatch& batch);

// A histogram of `lengths` (at most 256 bins of equal counts, each its lengths' mean).
LengthDistribution histogram_of(const std::vector<int64_t>& lengths);

}  // namespace fathom::workloads::rl
