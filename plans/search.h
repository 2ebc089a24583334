#pragma once
// Training plan search: every plan of a SearchSpace (plans/search_space.h) over one model and
// cluster, pruned by exact checks before anything is simulated (the plan constraints, then the pure
// memory estimate: a plan that does not fit is pruned with its peak), the survivors replayed in
// full (evaluate_training) on a pool of threads, ranked by the objective's score
// (plans/search_objective.h: goodput, throughput or cost).
//
// Candidates are the product of the training axes of the search key table (plans/search_keys.h:
// tp, pp, vp, cp, ep, micro-batch, global batch, ZeRO stage, recompute, schedule, dtype, in that
// order, each in its list's order; plans/search_product.h), each with the layout's derived
// settings (dp = GPUs / (tp x pp x cp), the expert tp, sequence parallelism), less what the
// pruning rules (training_prune_rules) drop. Each result is stored at its candidate's index, so
// the result is bit-identical at any thread count; ties in the ranking go to the lower index. A
// time limit makes the set of evaluated candidates depend on the machine (those not started are
// reported as skipped).
#include "plans/evaluate.h"
#include "plans/search_keys.h"
#include "plans/search_product.h"
#include "plans/search_space.h"
#include "sim/enum_names.h"
#include "sim/error.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fathom::plans {

enum class CandidateStatus { Evaluated, Pruned, OutOfMemory, Skipped };
constexpr auto enum_names(CandidateStatus) {
    return sim::name_table<CandidateStatus>({{CandidateStatus::Evaluated, "evaluated"},
                                             {CandidateStatus::Pruned, "pruned"},
                                             {CandidateStatus::OutOfMemory, "out_of_memory"},
                                             {CandidateStatus::Skipped, "skipped"}});
}

struct Candidate {
    int64_t index = 0;
    workloads::TrainingPlan plan;
    CandidateStatus status = CandidateStatus::Skipped;
    std::string reason;            // why pruned (the violated keys) or out of memory
    double peak_memory_bytes = 0;  // from the estimate (pruned for memory) or the replay
    double capacity_bytes = 0;
    double step_time_s = 0;
    double tokens_per_s = 0;  // whole cluster
    double mfu = 0;
    double statistical_efficiency = 1;
    double goodput_tokens_per_s = 0;    // tokens_per_s x statistical_efficiency
    double usd_per_million_tokens = 0;  // 0 without a price
    bool pareto_memory = false;         // no other evaluated plan has more throughput and less memory
    bool pareto_cost = false;           // no other has more goodput at a lower cost per token
};

// One process's share of a search run by several (MPI ranks, or Python workers): it evaluates the
// candidates i with i mod size == rank (interleaved, so that neighbouring candidates of similar
// cost spread over the processes); the others stay Skipped until merge_search_share (or
// merge_serving_search_share) fills them.
struct Partition {
    int rank = 0, size = 1;
    bool owns(size_t i) const { return size <= 1 || static_cast<int>(i % static_cast<size_t>(size)) == rank; }
};

struct SearchOptions {
    Partition partition;
    int threads = 1;
    int64_t max_candidates = 0;                      // 0: all; else the first N of the enumeration order
    double time_limit_s = 0;                         // 0: none; candidates not started by then are skipped
    std::function<void(int64_t, int64_t)> progress;  // (candidates done, total), from the caller's thread
};

struct SearchResult {
    std::vector<Candidate> candidates;  // in enumeration order
    std::vector<int64_t> ranking;       // indices of evaluated candidates, best first
    int64_t evaluated = 0, pruned = 0, out_of_memory = 0, skipped = 0;
    bool truncated = false;        // the enumeration stopped early ...
    std::string truncation;        // ... why (enumeration_cut), "" when complete
    double base_global_batch = 0;  // B0 of the statistical efficiency
};

// Runs evaluate(i) for every i in [0, n) that options.partition owns, on options.threads threads
// (the calling one included, which reports progress over the owned ones), each thread taking the
// next index; stops starting new ones options.time_limit_s after `start`, and rethrows the first
// exception after every thread has stopped.
void run_candidates(size_t n, const SearchOptions& options, const std::function<void(size_t)>& evaluate,
                    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now());

// The outcome of `evaluate` for candidate `c`, or nullopt with `c` marked: an input the simulator
// cannot represent (a step or run beyond simulated time's range) prunes it with the reason, a KV
// cache that cannot hold a request makes it out of memory, violations prune it; the other
// candidates go on.
template <typename C, typename F>
std::optional<Outcome> guarded_outcome(C& c, F&& evaluate) {
    Outcome o;
    try {
        o = evaluate();
    } catch (const sim::KvCapacityError& e) {
        c.status = CandidateStatus::OutOfMemory;
        c.reason = e.bare_message();
        return std::nullopt;
    } catch (const sim::InputError& e) {
        c.status = CandidateStatus::Pruned;
        c.reason = e.bare_message();
        return std::nullopt;
    }
    if (!o.ok()) {
        c.status = CandidateStatus::Pruned;
        c.reason = describe(o.violations);
        return std::nullopt;
    }
    return o;
}

// The most candidates a search holds after pruning: 200,000 (about 2 KB each with their outcomes
// and report records, measured; reporting them takes about 0.4 s).
constexpr int64_t kMaxCandidates = 200'000;

// A search's enumeration bounds from its options, its clock started at `start`: the first
// max_candidates (at most kMaxCandidates) candidates, and the time limit's deadline. The deadline
// applies to one process only: the ranks of a partitioned search must enumerate the same
// candidates (kMaxCombinations bounds their enumeration instead).
CrossLimits enumeration_limits(const SearchOptions& options, std::chrono::steady_clock::time_point start);
// Why an enumeration stopped short ("cut by --max-candidates", "cut by --time-limit during
// enumeration", "cut at the 1000000-candidate bound" under a time limit), "" when it did not.
// InputError (key `search`) when it reached kMaxCandidates with neither option to say which.
std::string enumeration_cut(bool full, bool timed_out, const SearchOptions& options);

// Marks the evaluated candidates (training or serving) that no other evaluated one dominates: at
// least as good on `a` (higher is better) and on `b` (lower is better), strictly better on one.
template <typename C, typename A, typename B>
void mark_pareto(std::vector<C>& cs, A a, B b, bool C::*flag) {
    std::vector<size_t> ev;
    for (size_t i = 0; i < cs.size(); ++i)
        if (cs[i].status == CandidateStatus::Evaluated) ev.push_back(i);
    for (size_t i : ev) {
        bool dominated = false;
        for (size_t j : ev)
            if (a(cs[j]) >= a(cs[i]) && b(cs[j]) <= b(cs[i]) && (a(cs[j]) > a(cs[i]) || b(cs[j]) < b(cs[i]))) {
                dominated = true;
                break;
            }
        cs[i].*flag = !dominated;
    }
}

// The counts of a result by status, and its ranking reset to the evaluated candidates in
// enumeration order (the caller sorts it).
template <typename R>
void tally_candidates(R& result) {
    result.evaluated = result.pruned = result.out_of_memory = result.skipped = 0;
    result.ranking.clear();
    for (const auto& c : result.candidates) {
        switch (c.status) {
            case CandidateStatus::Evaluated: ++result.evaluated; break;
            case CandidateStatus::Pruned: ++result.pruned; break;
            case CandidateStatus::OutOfMemory: ++result.out_of_memory; break;
            case CandidateStatus::Skipped: ++result.skipped; break;
        }
        if (c.status == CandidateStatus::Evaluated) result.ranking.push_back(c.index);
    }
}

// The divisors of n in increasing order (the default degrees of a search axis).
std::vector<int64_t> divisors(int64_t n);

// (b_noise + b0) / (b_noise + b); 1 when b_noise is 0 (not given).
double statistical_efficiency(double b_noise, double b0, double b);

// Declarative table: the combinations of axis values the training search drops before they are
// candidates (a layout that does not factor the GPU count, settings that cannot differ).
const std::vector<PruneRule<workloads::TrainingPlan>>& training_prune_rules();

// The candidate plans of `space` around `base` (the scenario's plan: its stack, sequence length
// and every key no axis sets), before any check: the product of the training axes of `keys`.
// Throws InputError for an axis value no plan can take (an unknown schedule or dtype).
Crossed<workloads::TrainingPlan> cross_training_plans(const models::ModelSpec& model,
                                                      const hardware::ClusterSpec& cluster,
                                                      const workloads::TrainingPlan& base, const SearchSpace& space,
                                                      const std::vector<SearchKey>& keys = search_keys(),
                                                      const CrossLimits& limits = {});
std::vector<workloads::TrainingPlan> enumerate_training_plans(const models::ModelSpec& model,
                                                              const hardware::ClusterSpec& cluster,
                                                              const workloads::TrainingPlan& base,
                                                              const SearchSpace& space);

SearchResult search_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                             const workloads::TrainingPlan& base, const SearchSpace& space,
                             const EvaluationContext& context, const SearchOptions& options = {});

// The counts, ranking and Pareto flags of a result from its candidates' outcomes (search_training
// calls it; call it again after merging the shares of a partitioned search).
void finalize_training_search(SearchResult& result, const SearchSpace& space);

// A partitioned search's share as text (the outcomes of the candidates `partition` owns; doubles
// exact), and its merge into the full result of another process (same scenario, same space).
// merge throws InputError on a share of another search (index out of range, malformed text).
std::string encode_search_share(const SearchResult& result, const Partition& partition);
void merge_search_share(SearchResult& result, const std::string& share);

}  // namespace fathom::plans
