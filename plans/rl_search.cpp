#include "plans/rl_search.h"

#include "plans/report.h"
#include "plans/rl_evaluate.h"
#include "plans/search_keys.h"
#include "plans/search_objective.h"
#include "sim/error.h"

#include <algorithm>
#include <chrono>

namespace fathom::plans {

using workloads::rl::Layout;
using workloads::rl::RlPlan;

namespace {

// A candidate's derived settings: the rollout replicas filling their pool, the trainer's data
// parallelism filling its own; colocated, no pool of its own. A sync path the scenario took by default follows the
// candidate's layout (ipc colocated, nccl disaggregated); one it stated is kept.
void derive(RlPlan& p, const SearchBase& b) {
    auto default_sync = [](Layout l) {
        return l == Layout::Colocated ? workloads::rl::SyncPath::Ipc : workloads::rl::SyncPath::Nccl;
    };
    if (b.rl && p.rl.layout != b.rl->rl.layout && b.rl->rl.sync == default_sync(b.rl->rl.layout))
        p.rl.sync = default_sync(p.rl.layout);
    if (p.rl.layout == Layout::Colocated) p.rl.rollout_gpus = 0;
    const int64_t rollout = p.rl.rollout_pool(b.cluster.gpus()), trainer = p.rl.trainer_pool(b.cluster.gpus());
    auto& r = p.rollout.replica;
    if (rollout > 0) r.replicas = static_cast<int>(rollout / (int64_t{r.tp} * r.pp));
    auto& l = p.trainer.layout;
    const int64_t model_parallel = int64_t{l.tp} * l.pp * l.cp;
    if (trainer > 0) l.dp = static_cast<int>(trainer / model_parallel);
}

std::string layout_of(const RlPlan& p, const hardware::ClusterSpec& c) {
    const auto& r = p.rollout.replica;
    const auto& l = p.trainer.layout;
    std::string s = p.rl.layout == Layout::Colocated
                        ? "colocated "
                        : std::to_string(p.rl.rollout_gpus) + "+" + std::to_string(p.rl.trainer_pool(c.gpus())) + " ";
    s += std::to_string(r.replicas) + " x tp" + std::to_string(r.tp) + " | dp" + std::to_string(l.dp) + " tp" +
         std::to_string(l.tp) + " pp" + std::to_string(l.pp);
    s += " | N " + std::to_string(p.rl.samples) + " x " + std::to_string(p.rl.prompts);
    if (p.rl.staleness > 0) s += " | k " + std::to_string(p.rl.staleness);
    return s;
}

void evaluate_one(const models::ModelSpec& model, const hardware::ClusterSpec& cluster, const SearchSpace& space,
                  const EvaluationContext& context, uint64_t seed, RlMemo& memo, RlCandidate& c) {
    const auto o = guarded_outcome(c, [&] { return evaluate_rl(model, cluster, c.plan, context, seed, {}, &memo); });
    if (!o) return;
    const auto& r = *o->rl();
    if (r.out_of_memory) {
        c.status = CandidateStatus::OutOfMemory;
        c.reason = "the update step does not fit in device memory";
        return;
    }
    c.status = CandidateStatus::Evaluated;
    c.iteration_s = r.iteration_s;
    c.samples_per_s = r.samples_per_s;
    c.samples_per_s_per_gpu = r.samples_per_s_per_gpu;
    c.rollout_s = r.mean.rollout_s;
    c.forward_s = r.mean.forward_s;
    c.update_s = r.mean.update_s;
    c.sync_s = r.mean.sync_s;
    c.offload_s = r.mean.offload_s;
    c.staleness_mean = r.pipeline.mean_staleness;
    if (space.price_per_gpu_hour > 0 && c.samples_per_s > 0)
        c.usd_per_1k_samples = space.price_per_gpu_hour * static_cast<double>(c.gpus) / 3600.0 / c.samples_per_s * 1e3;
    c.score = objective_rule(space.objective).rl_score(c);
}

}  // namespace

// Declarative table: the RL search's pruning rules, checked in order.
const std::vector<PruneRule<RlPlan>>& rl_prune_rules() {
    using P = SearchPoint<RlPlan>;
    static const std::vector<PruneRule<RlPlan>> rules = {
        {"colocated-one-pool", "colocated plans have no rollout pool: the first pool size stands for the others",
         [](const P& x) { return x.plan.rl.layout == Layout::Colocated && !x.first("search.rl_rollout_gpus"); }},
        {"colocated-synchronous", "colocated GPUs take turns: no staleness bound above 0",
         [](const P& x) { return x.plan.rl.layout == Layout::Colocated && x.plan.rl.staleness > 0; }},
        {"pools-in-cluster", "a disaggregated rollout pool must leave GPUs to the trainer",
         [](const P& x) {
             return x.plan.rl.layout == Layout::Disaggregated &&
                    (x.plan.rl.rollout_gpus < 1 || x.plan.rl.rollout_gpus >= x.base.cluster.gpus());
         }},
        {"pools-factor", "each pool's GPUs must be whole engines (tp x pp) and whole trainer replicas (tp x pp x cp)",
         [](const P& x) {
             const RlPlan& p = x.plan;
             const auto& r = p.rollout.replica;
             const auto& l = p.trainer.layout;
             const int64_t rollout = p.rl.rollout_pool(x.base.cluster.gpus()),
                           trainer = p.rl.trainer_pool(x.base.cluster.gpus());
             return rollout % (int64_t{r.tp} * r.pp) != 0 || trainer % (int64_t{l.tp} * l.pp * l.cp) != 0;
         }},
    };
    return rules;
}

RlSearchResult search_rl(const models::ModelSpec& model, const hardware::ClusterSpec& cluster, const RlPlan& base,
                         const SearchSpace& space, const EvaluationContext& context, uint64_t seed,
                         const SearchOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    check_objective(space.objective, WorkloadKind::Rl, space.price_per_gpu_hour > 0, false);
    RlSearchResult result;
    SearchBase b{model, cluster, space, nullptr, nullptr, context.catalog.get()};
    b.rl = &base;
    Crossed<RlPlan> crossed = cross(base, resolve_axes(search_keys(), b, base), b, derive, rl_prune_rules(),
                                    enumeration_limits(options, start));
    result.truncation = enumeration_cut(crossed.full, crossed.timed_out, options);
    result.truncated = !result.truncation.empty();
    result.dropped = crossed.dropped;
    auto& cs = result.candidates;
    cs.resize(crossed.plans.size());
    for (size_t i = 0; i < cs.size(); ++i) {
        RlCandidate& c = cs[i];
        c.index = static_cast<int64_t>(i);
        c.plan = std::move(crossed.plans[i]);
        c.layout = layout_of(c.plan, cluster);
        c.gpus = cluster.gpus();
    }
    RlMemo memo;
    run_candidates(
        cs.size(), options, [&](size_t i) { evaluate_one(model, cluster, space, context, seed, memo, cs[i]); }, start);
    tally_candidates(result);
    std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](int64_t x, int64_t y) {
        return cs[static_cast<size_t>(x)].score > cs[static_cast<size_t>(y)].score;
    });
    return result;
}

Record rl_candidate_record(const RlCandidate& c, int64_t rank) {
    Record r;
    r.add("rank", rank);
    r.add("index", c.index);
    r.add("status", std::string(sim::name(c.status)));
    r.add("layout", c.layout);
    r.add("rl_layout", std::string(sim::name(c.plan.rl.layout)));
    r.add("rollout_gpus", c.plan.rl.rollout_pool(c.gpus));
    r.add("rollout_tp", static_cast<int64_t>(c.plan.rollout.replica.tp));
    r.add("rollout_replicas", static_cast<int64_t>(c.plan.rollout.replica.replicas));
    r.add("trainer_dp", static_cast<int64_t>(c.plan.trainer.layout.dp));
    r.add("trainer_tp", static_cast<int64_t>(c.plan.trainer.layout.tp));
    r.add("trainer_pp", static_cast<int64_t>(c.plan.trainer.layout.pp));
    r.add("samples", c.plan.rl.samples);
    r.add("prompts", c.plan.rl.prompts);
    r.add("staleness", static_cast<int64_t>(c.plan.rl.staleness));
    r.add("iteration_s", c.iteration_s);
    r.add("samples_per_s", c.samples_per_s);
    r.add("samples_per_s_per_gpu", c.samples_per_s_per_gpu);
    r.add("rollout_s", c.rollout_s);
    r.add("forward_s", c.forward_s);
    r.add("update_s", c.update_s);
    r.add("sync_s", c.sync_s);
    r.add("offload_s", c.offload_s);
    r.add("staleness_mean", c.staleness_mean);
    r.add("usd_per_1k_samples", c.usd_per_1k_samples);
    r.add("score", c.score);
    r.add("reason", c.reason);
    return r;
}

}  // namespace fathom::plans
