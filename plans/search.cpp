#include "plans/search.h"

#include "plans/constraints.h"
#include "plans/keys.h"
#include "plans/search_wire.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/training_memory.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <numeric>
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

// The axes with their defaults filled in (search_space.h: an empty list is the default).
SearchSpace with_defaults(const models::ModelSpec& m, const hardware::ClusterSpec& c, const TrainingPlan& base,
                          SearchSpace s) {
    const int64_t gpus = c.gpus();
    if (s.tp.empty())  // within a node (TP traffic stays on the scale-up fabric), dividing the query heads
        for (int64_t d : divisors(c.gpus_per_node))
            if (m.heads % d == 0) s.tp.push_back(d);
    if (s.pp.empty())  // even splits of the layers
        for (int64_t d : divisors(std::gcd<int64_t>(m.layers, gpus)))
            if (d <= 64) s.pp.push_back(d);
    if (s.vp.empty()) s.vp = {1, 2, 4};
    if (s.cp.empty()) s.cp = {base.layout.cp};
    if (s.ep.empty()) s.ep = {base.layout.ep};
    if (s.micro_batch.empty()) s.micro_batch = {1, 2, 4};
    if (s.global_batch.empty()) s.global_batch = {base.training.global_batch};
    if (s.zero_stage.empty()) s.zero_stage = {0, 1, 2, 3};
    if (s.recompute.empty()) s.recompute = sim::choices<workloads::Recompute>();
    if (s.schedule.empty()) s.schedule = {"auto"};
    if (s.dtype.empty()) s.dtype = {std::get<std::string>(get_training_key(base, "stack.dtype"))};
    return s;
}

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
    // A candidate the simulator cannot represent (a step beyond simulated time's range) is pruned
    // with the reason; the other candidates go on.
    Outcome o;
    try {
        o = evaluate_training(model, cluster, c.plan, context);
    } catch (const sim::InputError& e) {
        c.status = CandidateStatus::Pruned;
        c.reason = e.bare_message();
        return;
    }
    if (!o.ok()) {
        c.status = CandidateStatus::Pruned;
        c.reason = describe(o.violations);
        return;
    }
    const workloads::StepReport& r = *o.training();
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

}  // namespace

namespace {

// The parallel layouts of the space, in axis order: tp x pp x cp dividing the GPU count, vp > 1
// only with a pipeline, ep > 1 only for a mixture-of-experts model.
std::vector<workloads::ParallelLayout> layouts(const models::ModelSpec& model, int64_t gpus,
                                               const workloads::ParallelLayout& base, const SearchSpace& s) {
    std::vector<workloads::ParallelLayout> out;
    for (int64_t tp : s.tp)
        for (int64_t pp : s.pp)
            for (int64_t vp : s.vp)
                for (int64_t cp : s.cp)
                    for (int64_t ep : s.ep) {
                        if (gpus % (tp * pp * cp) != 0 || (pp == 1 && vp > 1) || (!model.moe.enabled() && ep > 1))
                            continue;
                        workloads::ParallelLayout l = base;
                        l.tp = static_cast<int>(tp);
                        l.pp = static_cast<int>(pp);
                        l.vp = static_cast<int>(vp);
                        l.cp = static_cast<int>(cp);
                        l.dp = static_cast<int>(gpus / (tp * pp * cp));
                        l.ep = static_cast<int>(ep);
                        l.etp = base.etp > 1 && base.etp == base.tp ? l.tp : 1;
                        l.sequence_parallel = base.sequence_parallel && tp > 1;
                        out.push_back(l);
                    }
    return out;
}

}  // namespace

std::vector<TrainingPlan> enumerate_training_plans(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                                   const TrainingPlan& base, const SearchSpace& space) {
    const SearchSpace s = with_defaults(model, cluster, base, space);
    std::vector<TrainingPlan> out;
    for (const workloads::ParallelLayout& layout : layouts(model, cluster.gpus(), base.layout, s)) {
        // Without data parallelism (dense or expert) ZeRO shards nothing, and without a pipeline
        // the schedule does not matter: the first stage and schedule stand for all.
        const bool sharded =
            layout.dp * layout.cp > 1 || (model.moe.enabled() && layout.group(models::GroupKind::edp).size > 1);
        for (int64_t mb : s.micro_batch)
            for (int64_t gb : s.global_batch)
                for (int64_t zero : s.zero_stage)
                    for (const std::string& rc : s.recompute)
                        for (const std::string& sched : s.schedule)
                            for (const std::string& dt : s.dtype) {
                                if ((!sharded && zero != s.zero_stage.front()) ||
                                    (layout.pp == 1 && sched != s.schedule.front()))
                                    continue;
                                TrainingPlan p = base;
                                p.layout = layout;
                                p.training.micro_batch = static_cast<int>(mb);
                                p.training.global_batch = static_cast<int>(gb);
                                p.training.zero_stage = static_cast<int>(zero);
                                p.training.layers_per_virtual_stage.clear();
                                set_training_key(p, "training.recompute", rc);
                                set_training_key(p, "training.schedule",
                                                 sched != "auto" ? sched : workloads::default_schedule(layout));
                                set_training_key(p, "stack.dtype", dt);
                                out.push_back(std::move(p));
                            }
    }
    return out;
}

void run_candidates(size_t n, const SearchOptions& options, const std::function<void(size_t)>& evaluate) {
    // Work queue: each thread takes the next index; results land at their index.
    const auto start = std::chrono::steady_clock::now();
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
    if (space.objective == "capacity")
        throw sim::InputError("capacity ranks serving plans; training plans rank by goodput, throughput or cost", "", 0,
                              "search.objective");
    if (space.objective == "cost" && space.price_per_gpu_hour <= 0)
        throw sim::InputError("ranking by cost needs search.price_per_gpu_hour", "", 0, "search.objective");
    SearchResult result;
    result.base_global_batch = base.training.global_batch;
    std::vector<TrainingPlan> plans = enumerate_training_plans(model, cluster, base, space);
    if (options.max_candidates > 0 && static_cast<int64_t>(plans.size()) > options.max_candidates) {
        plans.resize(static_cast<size_t>(options.max_candidates));
        result.truncated = true;
    }
    auto& cs = result.candidates;
    cs.resize(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
        cs[i].index = static_cast<int64_t>(i);
        cs[i].plan = std::move(plans[i]);
    }

    run_candidates(cs.size(), options, [&](size_t i) {
        evaluate_one(model, cluster, context, space.b_noise, result.base_global_batch, space.price_per_gpu_hour, cs[i]);
    });

    finalize_training_search(result, space);
    return result;
}

void finalize_training_search(SearchResult& result, const SearchSpace& space) {
    auto& cs = result.candidates;
    for (Candidate& c : cs) c.pareto_memory = c.pareto_cost = false;
    tally_candidates(result);
    auto key = [&](const Candidate& c) {
        if (space.objective == "throughput") return c.tokens_per_s;
        if (space.objective == "cost") return -c.usd_per_million_tokens;
        return c.goodput_tokens_per_s;
    };
    std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](int64_t x, int64_t y) {
        return key(cs[static_cast<size_t>(x)]) > key(cs[static_cast<size_t>(y)]);
    });
    mark_pareto(
        cs, [](const Candidate& c) { return c.tokens_per_s; }, [](const Candidate& c) { return c.peak_memory_bytes; },
        &Candidate::pareto_memory);
    if (space.price_per_gpu_hour > 0)
        mark_pareto(
            cs, [](const Candidate& c) { return c.goodput_tokens_per_s; },
            [](const Candidate& c) { return c.usd_per_million_tokens; }, &Candidate::pareto_cost);
}

namespace {
std::vector<double*> share_numbers(Candidate& c) {
    return {&c.peak_memory_bytes,      &c.capacity_bytes,       &c.step_time_s,           &c.tokens_per_s, &c.mfu,
            &c.statistical_efficiency, &c.goodput_tokens_per_s, &c.usd_per_million_tokens};
}
}  // namespace

std::string encode_search_share(const SearchResult& result, const Partition& partition) {
    return encode_share(result.candidates, partition, share_numbers);
}

void merge_search_share(SearchResult& result, const std::string& share) {
    merge_share(result.candidates, share, share_numbers);
}

}  // namespace fathom::plans
