// `fathom search SCENARIO`: the training plans of the scenario's `search` section, ranked
// (plans/search.h); a serving scenario's go to search_serving.cpp.
#include "plans/search.h"

#include "plans/adaptive.h"
#include "plans/search_report.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/mpi.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

namespace fathom::cli {
namespace {}  // namespace

plans::SearchOptions search_options(const Args& a, const MpiWorld& mpi) {
    plans::SearchOptions opt;
    opt.partition = {mpi.rank, mpi.size};
    opt.threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    opt.max_candidates = a.max_candidates;
    opt.time_limit_s = a.time_limit;
    return opt;
}

namespace {

std::string hours(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600.0);
    return buf;
}

nlohmann::json print_adaptive(const plans::SearchResult& r, const plans::SearchSpace& space,
                              const plans::AdaptiveRun& run) {
    const auto& fixed = r.candidates[static_cast<size_t>(run.best_fixed)];
    std::printf("\ntime to target  %.3g tokens at global batch %.0f; gradient noise scale %.0f -> %.0f sequences\n",
                space.target_tokens, r.base_global_batch, space.b_noise,
                space.b_noise_final > 0 ? space.b_noise_final : space.b_noise);
    std::printf("best fixed plan %s: %s\n", hours(run.best_fixed_s).c_str(), fixed.plan.describe().c_str());
    nlohmann::json phases = nlohmann::json::array();
    if (space.phases > 1) {
        std::printf(
            "adaptive run    %s in %d phases (%+.1f%% against the best fixed plan); layout changes: %d, costing %s "
            "(one: %.0f s for a %.0f GB checkpoint)\n",
            hours(run.seconds).c_str(), space.phases, 100 * (run.seconds / run.best_fixed_s - 1), run.switches,
            hours(run.reconfigure_s).c_str(), run.reconfigure_one_s, run.checkpoint_bytes / 1e9);
        std::printf("  %-5s %-13s %-15s %8s %10s  %s\n", "phase", "progress", "b_noise", "batch", "time", "plan");
        for (size_t k = 0; k < run.phases.size(); ++k) {
            const auto& ph = run.phases[k];
            const auto& c = r.candidates[static_cast<size_t>(ph.candidate)];
            char prog[32], noise[32];
            std::snprintf(prog, sizeof prog, "%.2f-%.2f", ph.progress_begin, ph.progress_end);
            std::snprintf(noise, sizeof noise, "%.0f-%.0f", ph.b_noise_begin, ph.b_noise_end);
            std::printf("  %-5zu %-13s %-15s %8d %10s  %s%s\n", k + 1, prog, noise, c.plan.training.global_batch,
                        hours(ph.seconds).c_str(), c.plan.describe().c_str(),
                        ph.reconfigure_s > 0 ? "  (restart)" : "");
            phases.push_back({{"progress_begin", ph.progress_begin},
                              {"progress_end", ph.progress_end},
                              {"b_noise_begin", ph.b_noise_begin},
                              {"b_noise_end", ph.b_noise_end},
                              {"candidate", ph.candidate},
                              {"plan", c.plan.describe()},
                              {"sequences", ph.sequences},
                              {"seconds", ph.seconds},
                              {"reconfigure_s", ph.reconfigure_s}});
        }
    }
    return {{"target_tokens", space.target_tokens},
            {"best_fixed", run.best_fixed},
            {"best_fixed_s", run.best_fixed_s},
            {"seconds", space.phases > 1 ? run.seconds : run.best_fixed_s},
            {"switches", run.switches},
            {"reconfigure_s", run.reconfigure_s},
            {"checkpoint_bytes", run.checkpoint_bytes},
            {"phases", phases}};
}

}  // namespace

int cmd_search(const Args& a) {
    const auto catalog = scenarios::load_catalog();
    const plans::Scenario s = scenarios::load_scenario(one_file(a), *catalog, a.sets);
    for (const auto& w : s.warnings) std::cerr << "fathom: warning: " << printable(w.text()) << "\n";
    if (s.serving()) return cmd_search_serving(a, s, catalog);
    const plans::SearchSpace space = s.search.value_or(plans::SearchSpace{});
    const auto& base = *s.training();
    const plans::EvaluationContext ctx = cli_context(catalog, s.seed, a);
    const MpiWorld mpi = mpi_world();
    plans::SearchOptions opt = search_options(a, mpi);
    plans::SearchResult r;
    const auto start = std::chrono::steady_clock::now();
    if (!run_search(
            s.file, "search: plans", mpi, opt, r,
            [&](const plans::SearchOptions& o) {
                return plans::search_training(s.model, s.cluster, base, space, ctx, o);
            },
            plans::encode_search_share, plans::merge_search_share,
            [&](plans::SearchResult& x) { plans::finalize_training_search(x, space); }))
        return 0;  // another MPI rank: rank 0 reports
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int64_t total = static_cast<int64_t>(r.candidates.size());

    std::printf("scenario        %s: %s on %d x %s\n", s.name.c_str(), s.model.name.c_str(), s.cluster.gpus(),
                s.cluster.accelerator.id.c_str());
    std::printf("objective       %s%s\n", space.objective.c_str(),
                space.b_noise > 0
                    ? (" (b_noise " + std::to_string(static_cast<long long>(space.b_noise)) + " sequences, B0 " +
                       std::to_string(static_cast<long long>(r.base_global_batch)) + ")")
                          .c_str()
                    : "");
    std::printf(
        "candidates      %lld%s: %lld simulated, %lld pruned by plan checks, %lld out of memory (estimate), %lld "
        "skipped\n",
        static_cast<long long>(total), r.truncated ? " (cut by --max-candidates)" : "",
        static_cast<long long>(r.evaluated), static_cast<long long>(r.pruned), static_cast<long long>(r.out_of_memory),
        static_cast<long long>(r.skipped));
    std::printf("time            %.2f s on %d threads%s, %.0f candidates/s\n", wall, opt.threads,
                mpi.size > 1 ? (" x " + std::to_string(mpi.size) + " MPI ranks").c_str() : "",
                wall > 0 ? total / wall : 0.0);
    const bool cost = space.price_per_gpu_hour > 0;
    std::printf("\n%4s %4s %3s %3s %3s %3s %3s %3s %6s %4s %-9s %-16s %-5s %9s %12s %6s %10s %12s%s %s\n", "rank", "dp",
                "tp", "pp", "vp", "cp", "ep", "mb", "gb", "zero", "recompute", "schedule", "dtype", "step_s",
                "tokens/s", "mfu", "peak_mem", "goodput", cost ? "    $/Mtok" : "", "pareto");
    const size_t rows = std::min<size_t>(r.ranking.size(), static_cast<size_t>(space.top));
    for (size_t k = 0; k < rows; ++k) {
        const plans::Candidate& c = r.candidates[static_cast<size_t>(r.ranking[k])];
        const auto& l = c.plan.layout;
        const auto& t = c.plan.training;
        char cost_col[32] = "";
        if (cost) std::snprintf(cost_col, sizeof cost_col, " %10.4f", c.usd_per_million_tokens);
        std::string pareto = c.pareto_memory ? "mem" : "";
        if (c.pareto_cost) pareto += pareto.empty() ? "cost" : ",cost";
        std::printf("%4zu %4d %3d %3d %3d %3d %3d %3d %6d %4d %-9s %-16s %-5s %9.4f %12.0f %5.1f%% %10s %12.0f%s %s\n",
                    k + 1, l.dp, l.tp, l.pp, l.vp, l.cp, l.ep, t.micro_batch, t.global_batch, t.zero_stage,
                    sim::name(t.recompute), t.schedule.c_str(),
                    std::get<std::string>(plans::get_training_key(c.plan, "stack.dtype")).c_str(), c.step_time_s,
                    c.tokens_per_s, 100 * c.mfu, gib(c.peak_memory_bytes).c_str(), c.goodput_tokens_per_s, cost_col,
                    pareto.c_str());
    }
    // Where the scenario's own plan stands.
    const auto own = std::find_if(r.candidates.begin(), r.candidates.end(),
                                  [&](const plans::Candidate& c) { return c.plan == base; });
    if (own == r.candidates.end()) {
        std::printf("\nscenario's plan is not in the searched space\n");
    } else if (own->status != plans::CandidateStatus::Evaluated) {
        std::printf("\nscenario's plan %s: %s\n", sim::name(own->status), own->reason.c_str());
    } else {
        const size_t rank =
            static_cast<size_t>(std::find(r.ranking.begin(), r.ranking.end(), own->index) - r.ranking.begin());
        const plans::Candidate& best = r.candidates[static_cast<size_t>(r.ranking.front())];
        std::printf("\nscenario's plan rank %zu of %zu (%.0f tokens/s; the best %+.1f%%)\n", rank + 1, r.ranking.size(),
                    own->tokens_per_s, 100 * (best.goodput_tokens_per_s / own->goodput_tokens_per_s - 1));
    }
    // The commonest reasons for pruning.
    std::map<std::string, int64_t> reasons;
    for (const auto& c : r.candidates)
        if (c.status == plans::CandidateStatus::Pruned) ++reasons[c.reason.substr(0, c.reason.find('\n'))];
    if (!reasons.empty()) {
        std::vector<std::pair<int64_t, std::string>> by_count;
        for (const auto& [why, n] : reasons) by_count.emplace_back(-n, why);
        std::sort(by_count.begin(), by_count.end());
        std::printf("pruned because  ");
        for (size_t k = 0; k < std::min<size_t>(3, by_count.size()); ++k)
            std::printf("%s%lld x %s\n", k ? "                " : "", static_cast<long long>(-by_count[k].first),
                        by_count[k].second.c_str());
    }
    // Time to target: the best fixed plan, and the adaptive run over phases (COPUS).
    nlohmann::json adaptive;
    if (space.phases > 1 || space.target_tokens > 0) {
        const plans::AdaptiveRun run = naming_file(
            s.file, [&] { return plans::plan_adaptive_run(r, space, s.model, s.cluster, base.training.seq_len); });
        if (run.best_fixed >= 0) adaptive = print_adaptive(r, space, run);
    }
    std::vector<plans::Record> records;
    for (const auto& c : r.candidates) records.push_back(plans::training_candidate_record(c));
    if (!a.out.empty()) write_file(a.out, records_csv(records, plans::training_candidate_columns()));
    if (!a.json.empty()) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto& row : records) all.push_back(record_json(row));
        write_json(a.json, {{"scenario", s.name},
                            {"objective", space.objective},
                            {"candidates_total", total},
                            {"evaluated", r.evaluated},
                            {"pruned", r.pruned},
                            {"out_of_memory", r.out_of_memory},
                            {"skipped", r.skipped},
                            {"truncated", r.truncated},
                            {"ranking", r.ranking},
                            {"adaptive_run", adaptive},
                            {"candidates", all}});
    }
    return 0;
}

}  // namespace fathom::cli
