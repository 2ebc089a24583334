#include "plans/search.h"

#include "plans/constraints.h"
#include "plans/keys.h"
#include "plans/search_objective.h"
#include "plans/search_report.h"
#include "plans/search_wire.h"
#include "sim/error.h"
#include "workloads/training/training_memory.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

namespace fathom::plans {

using workloads::TrainingPlan;

std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> out;
    for (int64_t d = 1; d <= n; ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

double statistical_efficiency(double b_noise, double b0, double b) {
    if (b_noise <= 0) return 1.0;
    return (b_noise + b0) / (b_noise + b);
}

namespace {

std::string gib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

void evaluate_one(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                  const EvaluationContext& context, double b_noise, double b0, double price, Candidate& c) {
    const auto violations = check_training_plan(model, cluster, c.plan);
    if (!violations.empty()) {
        c.status = CandidateStatus::Pruned;
        c.reason = describe(violations);
        return;
    }
    const auto memory = workloads::estimate_training_memory(model, cluster, c.plan);
    c.peak_memory_bytes = memory.peak_bytes;
    c.capacity_bytes = memory.capacity_bytes;
    if (memory.out_of_memory) {
        c.status = CandidateStatus::OutOfMemory;
        c.reason = "peak " + gib(memory.peak_bytes) + " of " + gib(memory.capacity_bytes) + " per GPU";
        return;
    }
    const auto o = guarded_outcome(c, [&] { return evaluate_training(model, cluster, c.plan, context); });
    if (!o) return;
    const workloads::StepReport& r = *o->training();
    c.status = CandidateStatus::Evaluated;
    c.step_time_s = r.step_time_s;
    c.tokens_per_s = r.tokens_per_s_per_gpu * c.plan.gpus();
    c.mfu = r.mfu;
    c.peak_memory_bytes = r.peak_memory_bytes;
    c.capacity_bytes = r.memory_capacity_bytes;
    c.statistical_efficiency = statistical_efficiency(b_noise, b0, c.plan.training.global_batch);
    c.goodput_tokens_per_s = c.tokens_per_s * c.statistical_efficiency;
    if (price > 0 && c.tokens_per_s > 0)
        c.usd_per_million_tokens = price * c.plan.gpus() / 3600.0 / c.tokens_per_s * 1e6;
}

bool sharded(const models::ModelSpec& model, const workloads::ParallelLayout& l) {
    return l.dp * l.cp > 1 || (model.moe.enabled() && l.group(models::GroupKind::edp).size > 1);
}

// The settings the axes imply: dp fills the GPUs, the expert tp follows tp where the scenario's
// did, sequence parallelism needs tp > 1, and the layer split across virtual stages is the
// schedule's own.
void derive_training(TrainingPlan& p, const SearchBase& b) {
    workloads::ParallelLayout& l = p.layout;
    const workloads::ParallelLayout& base = b.training->layout;
    l.dp = static_cast<int>(b.cluster.gpus() / (int64_t{l.tp} * l.pp * l.cp));
    l.etp = base.etp > 1 && base.etp == base.tp ? l.tp : 1;
    l.sequence_parallel = base.sequence_parallel && l.tp > 1;
    p.training.layers_per_virtual_stage.clear();
}

}  // namespace

// Declarative table: the training search's pruning rules, checked in order.
const std::vector<PruneRule<TrainingPlan>>& training_prune_rules() {
    using P = SearchPoint<TrainingPlan>;
    static const std::vector<PruneRule<TrainingPlan>> rules = {
        {"layout-fills-gpus", "tp x pp x cp must divide the GPU count (dp takes the rest)",
         [](const P& x) {
             const auto& l = x.plan.layout;
             return x.base.cluster.gpus() % (int64_t{l.tp} * l.pp * l.cp) != 0;
         }},
        {"vp-needs-pp", "virtual stages need a pipeline (vp > 1 with pp 1)",
         [](const P& x) { return x.plan.layout.pp == 1 && x.plan.layout.vp > 1; }},
        {"ep-needs-moe", "expert parallelism needs a mixture-of-experts model (ep > 1)",
         [](const P& x) { return !x.base.model.moe.enabled() && x.plan.layout.ep > 1; }},
        {"zero-needs-sharding",
         "without data parallelism (dense or expert) ZeRO shards nothing: the first ZeRO stage stands for all",
         [](const P& x) { return !sharded(x.base.model, x.plan.layout) && !x.first("search.zero_stage"); }},
        {"schedule-needs-pp", "without a pipeline the schedule does not matter: the first schedule stands for all",
         [](const P& x) { return x.plan.layout.pp == 1 && !x.first("search.schedule"); }},
    };
    return rules;
}

Crossed<TrainingPlan> cross_training_plans(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                           const TrainingPlan& base, const SearchSpace& space,
                                           const std::vector<SearchKey>& keys, const CrossLimits& limits) {
    const SearchBase b{model, cluster, space, &base};
    return cross(base, resolve_axes(keys, b, base), b, derive_training, training_prune_rules(), limits);
}

CrossLimits enumeration_limits(const SearchOptions& options, std::chrono::steady_clock::time_point start) {
    CrossLimits l;
    l.max_plans = static_cast<size_t>(options.max_candidates > 0 ? std::min(options.max_candidates, kMaxCandidates)
                                                                 : kMaxCandidates);
    if (options.time_limit_s > 0 && options.partition.size <= 1)
        l.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(options.time_limit_s));
    return l;
}

std::string enumeration_cut(bool full, bool timed_out, const SearchOptions& options) {
    if (timed_out) return "cut by --time-limit during enumeration";
    if (!full) return "";
    if (options.max_candidates > 0 && options.max_candidates <= kMaxCandidates) return "cut by --max-candidates";
    const std::string bound = std::to_string(kMaxCandidates);
    if (options.time_limit_s > 0) return "cut at the " + bound + "-candidate bound";
    throw sim::InputError("the axes give more than " + bound +
                              " candidates after pruning, more than a search holds: narrow them, or take the first "
                              "N with --max-candidates N or what a time allows with --time-limit S",
                          "", 0, "search");
}

std::vector<TrainingPlan> enumerate_training_plans(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                                   const TrainingPlan& base, const SearchSpace& space) {
    return cross_training_plans(model, cluster, base, space).plans;
}

void run_candidates(size_t n, const SearchOptions& options, const std::function<void(size_t)>& evaluate,
                    std::chrono::steady_clock::time_point start) {
    // Work queue: each thread takes the next index; results land at their index.
    std::atomic<size_t> next{0};
    std::atomic<int64_t> done{0};
    std::atomic<bool> stop{false};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    int64_t total = 0;  // the candidates this process evaluates
    for (size_t i = 0; i < n; ++i) total += options.partition.owns(i) ? 1 : 0;
    auto work = [&](bool report) {
        for (;;) {
            if (options.time_limit_s > 0 &&
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > options.time_limit_s)
                stop = true;
            if (stop) return;
            const size_t i = next.fetch_add(1);
            if (i >= n) return;
            if (!options.partition.owns(i)) continue;
            try {
                evaluate(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                stop = true;  // stop every thread
                return;
            }
            const int64_t d = ++done;
            if (report && options.progress) options.progress(d, total);
        }
    };
    const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(std::max<size_t>(1, n))));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, false);
    work(true);
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    if (options.progress) options.progress(done, total);
}

SearchResult search_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                             const TrainingPlan& base, const SearchSpace& space, const EvaluationContext& context,
                             const SearchOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    check_objective(space.objective, WorkloadKind::Training, space.price_per_gpu_hour > 0, true);
    SearchResult result;
    result.base_global_batch = base.training.global_batch;
    Crossed<TrainingPlan> crossed =
        cross_training_plans(model, cluster, base, space, search_keys(), enumeration_limits(options, start));
    result.truncation = enumeration_cut(crossed.full, crossed.timed_out, options);
    result.truncated = !result.truncation.empty();
    std::vector<TrainingPlan>& plans = crossed.plans;
    auto& cs = result.candidates;
    cs.resize(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
        cs[i].index = static_cast<int64_t>(i);
        cs[i].plan = std::move(plans[i]);
    }

    run_candidates(
        cs.size(), options,
        [&](size_t i) {
            evaluate_one(model, cluster, context, space.b_noise, result.base_global_batch, space.price_per_gpu_hour,
                         cs[i]);
        },
        start);

    finalize_training_search(result, space);
    return result;
}

void finalize_training_search(SearchResult& result, const SearchSpace& space) {
    auto& cs = result.candidates;
    for (Candidate& c : cs) c.pareto_memory = c.pareto_cost = false;
    tally_candidates(result);
    const auto score = objective_rule(space.objective).training_score;
    std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](int64_t x, int64_t y) {
        return score(cs[static_cast<size_t>(x)]) > score(cs[static_cast<size_t>(y)]);
    });
    mark_pareto(
        cs, [](const Candidate& c) { return c.tokens_per_s; }, [](const Candidate& c) { return c.peak_memory_bytes; },
        &Candidate::pareto_memory);
    if (space.price_per_gpu_hour > 0)
        mark_pareto(
            cs, [](const Candidate& c) { return c.goodput_tokens_per_s; },
            [](const Candidate& c) { return c.usd_per_million_tokens; }, &Candidate::pareto_cost);
}

std::string encode_search_share(const SearchResult& result, const Partition& partition) {
    return encode_share(result.candidates, partition, training_candidate_fields());
}

void merge_search_share(SearchResult& result, const std::string& share) {
    merge_share(result.candidates, share, training_candidate_fields());
}

}  // namespace fathom::plans
