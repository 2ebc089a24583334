#include "plans/run_search.h"

#include "plans/run_steps.h"
#include "sim/error.h"

#include <algorithm>
#include <memory>

namespace fathom::plans {

namespace {

// The run sections tried: the product of the settings' lists, each absent one the section's value.
std::vector<RunRequest> run_settings(const Scenario& s, const SearchSpace& space) {
    const RunRequest& base = *s.run;
    std::vector<double> intervals = space.checkpoint_intervals_s;
    if (intervals.empty()) intervals = {base.checkpoint_interval_s};
    std::vector<CheckpointMethod> methods;
    for (const std::string& m : space.checkpoint_methods) methods.push_back(sim::parse<CheckpointMethod>(m));
    if (methods.empty()) methods = {base.method};
    std::vector<int64_t> spares = space.spare_nodes;
    if (spares.empty()) spares = {base.spare_nodes};
    else if (!(base.repair_s > 0) && base.spare_nodes < 0)
        throw sim::InputError("spare pools need a node's time out for repair: give run.repair", s.file, 0,
                              "search.spare_nodes");
    std::vector<Recovery> recoveries;
    for (const std::string& r : space.recoveries) recoveries.push_back(sim::parse<Recovery>(r));
    if (recoveries.empty()) recoveries = {base.recovery};
    const bool elastic = std::find(recoveries.begin(), recoveries.end(), Recovery::Elastic) != recoveries.end();
    if (elastic && base.reconfigure_s < 0)
        throw sim::InputError(
            "elastic recovery needs the job's pause as replicas leave or rejoin: give "
            "run.reconfigure",
            s.file, 0, "search.recovery");
    std::vector<RunRequest> out;
    for (double interval : intervals)
        for (CheckpointMethod method : methods)
            for (int64_t spare : spares)
                for (Recovery recovery : recoveries) {
                    RunRequest r = base;
                    r.checkpoint_interval_s = interval;
                    // A searched interval stands for the section's own, however it was given.
                    if (!space.checkpoint_intervals_s.empty()) r.checkpoint_every = 0;
                    r.method = method;
                    r.spare_nodes = spare;
                    r.recovery = recovery;
                    out.push_back(r);
                }
    return out;
}

}  // namespace

RunSearchResult search_runs(const Scenario& s, const SearchSpace& space, const SearchResult& plans,
                            const EvaluationContext& context, const SearchOptions& options) {
    RunSearchResult out;
    const std::vector<RunRequest> settings = run_settings(s, space);
    std::vector<int64_t> fitting;
    for (const Candidate& c : plans.candidates)
        if (c.status == CandidateStatus::Evaluated) fitting.push_back(c.index);
    out.plans = static_cast<int64_t>(fitting.size());
    out.settings = static_cast<int64_t>(settings.size());
    if (out.plans * out.settings > kMaxRunCandidates)
        throw sim::InputError(std::to_string(out.plans) + " plans x " + std::to_string(out.settings) +
                                  " run settings: more than " + std::to_string(kMaxRunCandidates) +
                                  " runs to simulate (fewer settings, or fewer plans: search.top does not limit "
                                  "them, the axes do)",
                              s.file, 0, "search.checkpoint_interval");
    // One scenario per plan (its run section replaced per setting), and its steps beside its own
    // (degraded, behind a drain), shared by its settings.
    std::vector<Scenario> scenarios(fitting.size(), s);
    std::vector<RunSteps> steps(fitting.size());
    const bool any_elastic = std::any_of(settings.begin(), settings.end(),
                                         [](const RunRequest& r) { return r.recovery == Recovery::Elastic; });
    const bool any_async = std::any_of(settings.begin(), settings.end(),
                                       [](const RunRequest& r) { return r.method == CheckpointMethod::Async; });
    for (size_t i = 0; i < fitting.size(); ++i) {
        scenarios[i].plan = plans.candidates[static_cast<size_t>(fitting[i])].plan;
        steps[i] = run_steps(scenarios[i], context, any_elastic, any_async);
    }
    out.candidates.resize(fitting.size() * settings.size());
    run_candidates(out.candidates.size(), options, [&](size_t i) {
        RunCandidate& c = out.candidates[i];
        const size_t p = i / settings.size();
        c.index = static_cast<int64_t>(i);
        c.plan = fitting[p];
        c.request = settings[i % settings.size()];
        c.step_time_s = plans.candidates[static_cast<size_t>(c.plan)].step_time_s;
        Scenario one = scenarios[p];
        one.run = c.request;
        try {
            const RunPlan run = plan_run(one, c.step_time_s, *context.catalog, steps[p]);
            c.interval_s = run.spec.checkpoint.interval_s;
            c.summary = simulate_runs(run);
            c.ok = true;
        } catch (const sim::InputError& e) {
            c.reason = e.key().empty() ? e.bare_message() : e.key() + ": " + e.bare_message();
        }
    });
    for (const RunCandidate& c : out.candidates) {
        if (c.ok) out.ranking.push_back(c.index);
        (c.ok ? out.simulated : out.refused) += 1;
    }
    std::stable_sort(out.ranking.begin(), out.ranking.end(), [&](int64_t a, int64_t b) {
        return out.candidates[static_cast<size_t>(a)].summary.wall_p50_s <
               out.candidates[static_cast<size_t>(b)].summary.wall_p50_s;
    });
    return out;
}

std::vector<Record> run_search_records(const RunSearchResult& runs, const SearchResult& plans) {
    std::vector<Record> out;
    out.reserve(runs.candidates.size());
    for (const RunCandidate& c : runs.candidates) {
        const workloads::TrainingPlan& p = plans.candidates[static_cast<size_t>(c.plan)].plan;
        Record r;
        r.add("index", c.index);
        r.add("plan", c.plan);
        r.add("dp", int64_t{p.layout.dp});
        r.add("tp", int64_t{p.layout.tp});
        r.add("pp", int64_t{p.layout.pp});
        r.add("cp", int64_t{p.layout.cp});
        r.add("micro_batch_size", int64_t{p.training.micro_batch});
        r.add("global_batch_size", int64_t{p.training.global_batch});
        r.add("checkpoint_interval_s", c.interval_s);
        r.add("checkpoint_method", std::string(sim::name(c.request.method)));
        r.add("spare_nodes", c.request.spare_nodes);
        r.add("recovery", std::string(sim::name(c.request.recovery)));
        r.add("step_time_s", c.step_time_s);
        r.add("ok", c.ok);
        r.add("reason", c.reason);
        if (c.ok) {
            const RunSummary& x = c.summary;
            r.add("time_to_target_s.p10", x.wall_p10_s);
            r.add("time_to_target_s.p50", x.wall_p50_s);
            r.add("time_to_target_s.p90", x.wall_p90_s);
            r.add("time_to_target_s.mean", x.wall_mean_s);
            r.add("ettr", x.ettr_mean);
            r.add("interruptions", x.failures);
        }
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace fathom::plans
