#pragma once
// RL plan search: every combination of the RL axes (plans/rl_search_keys.cpp: layout, rollout pool,
// rollout TP, trainer TP and PP, answers per prompt, prompts, staleness bound) around an RL
// scenario's plan, pruned of the combinations that cannot run or that another stands for, each
// survivor priced by evaluate_rl on a pool of threads with the candidates' shared rollouts and
// update steps priced once (RlMemo), ranked by the objective (plans/search_objective.h):
//   goodput, throughput  samples trained per second per GPU (RL has no SLO: the two agree);
//   cost                 USD per 1,000 samples (needs search.price_per_gpu_hour).
// Every candidate runs with the scenario's seed: bit-identical at any thread count (a time limit
// aside); ties go to the lower index.
#include "plans/evaluate.h"
#include "plans/report.h"
#include "plans/search.h"
#include "plans/search_product.h"
#include "plans/search_space.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::plans {

struct RlCandidate {
    int64_t index = 0;
    workloads::rl::RlPlan plan;
    CandidateStatus status = CandidateStatus::Skipped;
    std::string reason;  // why pruned, or out of memory
    std::string layout;  // "colocated 8 x tp2 | dp16 tp1 pp1", "32 GPUs 16 x tp2 | 32 GPUs dp32 tp1 pp1, k=1"
    int64_t gpus = 0;
    double iteration_s = 0, samples_per_s = 0, samples_per_s_per_gpu = 0;
    double rollout_s = 0, forward_s = 0, update_s = 0, sync_s = 0, offload_s = 0;
    double staleness_mean = 0;
    double usd_per_1k_samples = 0;  // 0 without a price
    double score = 0;               // the objective's value (higher is better)
};

struct RlSearchResult {
    std::vector<RlCandidate> candidates;  // in enumeration order
    std::vector<int64_t> ranking;         // evaluated candidates, best first
    int64_t evaluated = 0, pruned = 0, out_of_memory = 0, skipped = 0;
    bool truncated = false;
    std::string truncation;
    std::vector<int64_t> dropped;  // by each pruning rule (rl_prune_rules)
};

// Declarative table: the combinations the RL search drops before they are candidates.
const std::vector<PruneRule<workloads::rl::RlPlan>>& rl_prune_rules();

// A candidate as a flat record (the CSV and JSON columns of `fathom search`): its rank (0 when not
// evaluated), plan, numbers and reason.
Record rl_candidate_record(const RlCandidate& c, int64_t rank);

RlSearchResult search_rl(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                         const workloads::rl::RlPlan& base, const SearchSpace& space, const EvaluationContext& context,
                         uint64_t seed, const SearchOptions& options = {});

}  // namespace fathom::plans
