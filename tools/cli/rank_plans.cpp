// `fathom compare --rank-plans`: where each training case's published plan ranks in a plan
// search around it (plans/search.h), and how much faster fathom's best plan is predicted to be.
#include "plans/keys.h"
#include "plans/search.h"
#include "scenarios/measured.h"
#include "tools/cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace fathom::cli {
namespace {

using Values = std::vector<plans::KeyValue>;

void add(Values& axis, int64_t v) {
    if (std::find(axis.begin(), axis.end(), plans::KeyValue(v)) == axis.end()) axis.emplace_back(v);
}

plans::SearchSpace space_around(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                const workloads::TrainingPlan& p) {
    // What a team choosing a layout for the same job with the same software would try: the layout
    // (tp within a node, pp, vp), micro-batch and recomputation. The job and its software stay:
    // the global batch, sequence length, dtype, cp, ep, the ZeRO stage (a 2021 Megatron run had no
    // distributed optimizer to turn on) and the stack.
    plans::SearchSpace s;
    Values tp, pp, vp = {int64_t{1}, int64_t{2}, int64_t{4}}, mb = vp;
    for (int64_t d = 1; d <= cluster.gpus_per_node; ++d)
        if (cluster.gpus_per_node % d == 0 && model.heads % d == 0) tp.emplace_back(d);
    add(tp, p.layout.tp);
    for (int64_t d = 1; d <= 64; ++d)
        if (model.layers % d == 0 && cluster.gpus() % d == 0) pp.emplace_back(d);
    add(pp, p.layout.pp);
    add(vp, p.layout.vp);
    add(mb, p.training.micro_batch);
    Values schedule = {std::string("auto")};
    if (p.training.schedule != "1f1b" && p.training.schedule != "interleaved-1f1b")
        schedule.emplace_back(p.training.schedule);
    s.set_axis("search.tp", tp);
    s.set_axis("search.pp", pp);
    s.set_axis("search.vp", vp);
    s.set_axis("search.cp", {int64_t{p.layout.cp}});
    s.set_axis("search.ep", {int64_t{p.layout.ep}});
    s.set_axis("search.micro_batch_size", mb);
    s.set_axis("search.global_batch_size", {int64_t{p.training.global_batch}});
    s.set_axis("search.zero_stage", {int64_t{p.training.zero_stage}});
    const std::vector<std::string> recompute = sim::choices<workloads::Recompute>();
    s.set_axis("search.recompute", Values(recompute.begin(), recompute.end()));
    s.set_axis("search.schedule", schedule);
    s.set_axis("search.dtype", {plans::get_training_key(p, "stack.dtype")});
    s.objective = plans::Objective::Throughput;
    return s;
}

}  // namespace

nlohmann::json rank_published_plans(const std::vector<scenarios::CompareResult>& results,
                                    const plans::EvaluationContext& ctx, const Args& a) {
    nlohmann::json out = nlohmann::json::array();
    std::vector<const scenarios::CompareResult*> cases;
    for (const auto& r : results)
        if (r.ok() && r.training_plan && r.id.find('#') == std::string::npos) cases.push_back(&r);
    std::printf(
        "\nwhere each published training plan ranks in a search around it (layout, micro-batch, recompute;\n"
        "the job, dtype, ZeRO stage and stack as published), by predicted throughput:\n");
    std::printf("%-44s %6s %7s %8s  %s\n", "case", "rank", "of", "best/pub", "fathom's best plan");
    Progress bar("rank-plans: cases");
    int64_t done = 0;
    for (const auto* r : cases) {
        const plans::SearchSpace space = space_around(*r->model, *r->cluster, *r->training_plan);
        plans::SearchOptions opt;
        opt.threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        const plans::SearchResult s =
            plans::search_training(*r->model, *r->cluster, *r->training_plan, space, ctx, opt);
        bar(++done, static_cast<int64_t>(cases.size()));
        nlohmann::json j = {{"id", r->id}, {"candidates", s.candidates.size()}, {"evaluated", s.evaluated}};
        // The published plan as it ran (with its fill-ins, which the enumeration does not
        // reproduce field for field): its rank is one more than the plans predicted faster.
        const plans::Outcome o = plans::evaluate_training(*r->model, *r->cluster, *r->training_plan, ctx);
        const double published = o.ok() ? o.training()->tokens_per_s_per_gpu * r->training_plan->gpus() : 0;
        if (!(published > 0)) {
            std::printf("%-44s the published plan does not run\n", r->id.c_str());
        } else if (s.ranking.empty()) {
            // The fill-ins that let the published plan fit (recomputing the MoE blocks or the latent
            // attention's up-projections) are not axes of the search.
            std::printf("%-44s %6d %7d %7.2fx  the published plan (no plan of the space fits)\n", r->id.c_str(), 1, 1,
                        1.0);
            j["rank"] = 1;
            j["published_tokens_per_s"] = published;
            j["best_over_published"] = 1.0;
        } else {
            const plans::Candidate& best = s.candidates[static_cast<size_t>(s.ranking.front())];
            j["best_plan"] = best.plan.describe();
            j["best_tokens_per_s"] = best.tokens_per_s;
            size_t faster = 0;
            for (int64_t i : s.ranking)
                faster += s.candidates[static_cast<size_t>(i)].tokens_per_s > published * (1 + 1e-9) ? 1 : 0;
            const double speedup = std::max(1.0, best.tokens_per_s / published);
            std::printf("%-44s %6zu %7zu %7.2fx  %s\n", r->id.c_str(), faster + 1, s.ranking.size(), speedup,
                        faster ? best.plan.describe().c_str() : "the published plan");
            j["rank"] = faster + 1;
            j["published_tokens_per_s"] = published;
            j["best_over_published"] = speedup;
        }
        out.push_back(j);
    }
    return out;
}

}  // namespace fathom::cli
