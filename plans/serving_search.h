#pragma once
// Serving plan search: every layout of a SearchSpace's serving axes (device type, replicas of
// tp x pp, aggregated or split into x prefill and y decode replicas, batching policy, max_num_seqs,
// token budget) around a serving scenario's plan, pruned by exact checks before anything is
// simulated (the plan constraints, then the replica memory: weights and activations that leave no
// KV block are pruned with their sizes), the survivors simulated under the scenario's traffic on a
// pool of threads (plans/search.h: run_candidates), ranked by the objective's score
// (plans/search_objective.h):
//   goodput     requests meeting both SLOs per second per GPU, at the scenario's traffic;
//   throughput  output tokens per second per GPU, SLOs aside;
//   cost        USD per 1,000 requests meeting both SLOs (needs a price);
//   capacity    the highest request rate whose SLO attainment reaches slo.target (plans/capacity.h,
//               capacity.seeds seeds), per GPU, or per USD-hour when every device type has a price.
// Under goodput and cost, plans whose SLO attainment reaches slo.target rank first; the others
// follow, by attainment. Every candidate runs with the scenario's seed, so the result is
// bit-identical at any thread count (a time limit aside); ties go to the lower index.
//
// Candidates are the product (plans/search_product.h) of the serving axes of the search key table
// (plans/search_keys.h: accelerator, tp, pp, replicas, disaggregation (off, then the xPyD splits by
// x), policy, max_num_seqs, max_num_batched_tokens, each in its list's order) from the scenario's
// plan made aggregated, less what the pruning rules (serving_prune_rules) drop. A disaggregated
// candidate's pools both take the candidate's device type and tp x pp; other serving keys (engine,
// KV settings, router, dtype) are the scenario's. Other device types run in nodes shaped as the
// cluster's (gpus_per_node, scale-up and scale-out fabrics).
#include "plans/evaluate.h"
#include "plans/search.h"
#include "plans/search_space.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::plans {

struct ServingCandidate {
    int64_t index = 0;
    workloads::serving::ServingPlan plan;
    CandidateStatus status = CandidateStatus::Skipped;
    std::string reason;  // why pruned (the violated keys) or out of memory
    std::string layout;  // "2 x tp4 h100-sxm-80gb", "3P1D tp2 h100-sxm-80gb"
    int gpus = 0;
    double usd_per_hour = 0;  // the plan's GPUs at their prices (autoscaled: those held on average); 0 without one
    double kv_tokens_per_replica = 0;  // from the memory check (decode pool when disaggregated)
    // At the scenario's traffic (every objective).
    double slo_attainment = 0;
    double goodput_requests_per_s = 0, requests_per_s = 0, output_tokens_per_s = 0;
    double ttft_p50_s = 0, ttft_p90_s = 0, tpot_p50_s = 0, tpot_p90_s = 0;
    double usd_per_1k_good_requests = 0;  // 0 without a price or without goodput
    double joules_per_output_token = 0;   // at the devices' TDP (an upper bound); 0 without one
    // Autoscaled (serving.autoscale): the GPU-hours held over the run and the replicas held on average.
    double gpu_hours = 0, replicas_mean = 0;
    // capacity objective: the highest rate meeting slo.target (median over seeds).
    double capacity_requests_per_s = 0;
    double score = 0;             // the objective's value (higher is better)
    bool pareto_cost = false;     // no other has more goodput (capacity) at no more USD/h (GPUs)
    bool pareto_latency = false;  // no other has more output tokens/s at no higher p90 TTFT

    // Evaluated, with an SLO attainment reaching the plan's slo.target.
    bool meets_slo() const {
        return status == CandidateStatus::Evaluated && slo_attainment >= plan.slo.target_attainment;
    }
};

struct ServingSearchResult {
    std::vector<ServingCandidate> candidates;  // in enumeration order
    std::vector<int64_t> ranking;              // evaluated candidates, best first
    int64_t evaluated = 0, pruned = 0, out_of_memory = 0, skipped = 0;
    bool truncated = false;  // the enumeration stopped early ...
    std::string truncation;  // ... why (enumeration_cut), "" when complete
    bool priced = false;     // every device type tried has a price
};

// Declarative table: the combinations the serving search drops before they are candidates.
const std::vector<PruneRule<workloads::serving::ServingPlan>>& serving_prune_rules();

// The candidate plans of `space` around `base`, before any check: the product of the serving axes
// of `keys`. Throws InputError for an unknown accelerator id.
Crossed<workloads::serving::ServingPlan> cross_serving_plans(const models::ModelSpec& model,
                                                             const hardware::ClusterSpec& cluster,
                                                             const workloads::serving::ServingPlan& base,
                                                             const SearchSpace& space, const Catalog& catalog,
                                                             const std::vector<SearchKey>& keys = search_keys(),
                                                             const CrossLimits& limits = {});
std::vector<workloads::serving::ServingPlan> enumerate_serving_plans(const models::ModelSpec& model,
                                                                     const hardware::ClusterSpec& cluster,
                                                                     const workloads::serving::ServingPlan& base,
                                                                     const SearchSpace& space, const Catalog& catalog);

ServingSearchResult search_serving(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                   const workloads::serving::ServingPlan& base, const SearchSpace& space,
                                   const EvaluationContext& context, uint64_t seed, const SearchOptions& options = {});

// As for training searches (plans/search.h): counts, ranking and Pareto flags from the outcomes,
// and a partitioned search's share as text and its merge.
void finalize_serving_search(ServingSearchResult& result, const SearchSpace& space);
std::string encode_serving_search_share(const ServingSearchResult& result, const Partition& partition);
void merge_serving_search_share(ServingSearchResult& result, const std::string& share);

}  // namespace fathom::plans
