// `fathom search SCENARIO`: the training plans of the scenario's `search` section, ranked
// (plans/search.h); a serving scenario's go to search_serving.cpp.
#include "plans/search.h"

#include "plans/adaptive.h"
#include "plans/search_report.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/html.h"
#include "tools/cli/mpi.h"
#include "tools/cli/search_output.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

namespace fathom::cli {

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

// Declarative table: the training ranking's columns.
const std::vector<RankingColumn>& training_columns() {
    static const std::vector<RankingColumn> columns = {
        {"rank", nullptr, 4},
        {"dp", "dp", 4},
        {"tp", "tp", 3},
        {"pp", "pp", 3},
        {"vp", "vp", 3},
        {"cp", "cp", 3},
        {"ep", "ep", 3},
        {"mb", "micro_batch_size", 3},
        {"gb", "global_batch_size", 6},
        {"zero", "zero_stage", 4},
        {"recompute", "recompute", 9, 0, 1, "", true},
        {"schedule", "schedule", 16, 0, 1, "", true},
        {"dtype", "dtype", 5, 0, 1, "", true},
        {"step_s", "step_time_s", 9, 4},
        {"tokens/s", "tokens_per_s", 12},
        {"mfu", "mfu", 6, 1, 100, "%"},
        {"peak_mem", "peak_memory_gib", 10, 1, 1, " GiB"},
        {"goodput", "goodput_tokens_per_s", 12},
        {"$/Mtok", "usd_per_million_tokens", 10, 4, 1, "", false, ColumnShown::Priced},
        {"pareto", nullptr, 0, 0, 1, "", true, ColumnShown::Always,
         [](const plans::Record& r) {
             return pareto_flags(r, "pareto_throughput_memory", "mem", "pareto_goodput_cost", "cost");
         }},
    };
    return columns;
}

void print_training_header(const plans::Scenario& s, const plans::SearchSpace& space, const plans::SearchResult& r) {
    std::printf("scenario        %s: %s on %d x %s\n", s.name.c_str(), s.model.name.c_str(), s.cluster.gpus(),
                s.cluster.accelerator.id.c_str());
    std::printf("objective       %s%s\n", sim::name(space.objective),
                space.b_noise > 0
                    ? (" (b_noise " + std::to_string(static_cast<long long>(space.b_noise)) + " sequences, B0 " +
                       std::to_string(static_cast<long long>(r.base_global_batch)) + ")")
                          .c_str()
                    : "");
}

// The scenario's own plan, the reasons for pruning, and the time to target: the best fixed plan,
// and the adaptive run over phases (COPUS), as JSON (null without a target).
nlohmann::json print_training_findings(const plans::Scenario& s, const plans::SearchSpace& space,
                                       const plans::SearchResult& r) {
    const auto& base = *s.training();
    print_own_plan(
        r.candidates, r.ranking, [&](const plans::Candidate& c) { return c.plan == base; },
        [](const plans::Candidate& own, const plans::Candidate& best) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%.0f tokens/s; the best %+.1f%%", own.tokens_per_s,
                          100 * (best.goodput_tokens_per_s / own.goodput_tokens_per_s - 1));
            return std::string(buf);
        });
    print_reasons(r.candidates, "pruned because",
                  [](const plans::Candidate& c) { return c.status == plans::CandidateStatus::Pruned; });
    if (space.phases <= 1 && !(space.target_tokens > 0)) return nullptr;
    const plans::AdaptiveRun run = naming_file(
        s.file, [&] { return plans::plan_adaptive_run(r, space, s.model, s.cluster, base.training.seq_len); });
    return run.best_fixed >= 0 ? print_adaptive(r, space, run) : nlohmann::json();
}

}  // namespace

std::string pareto_flags(const plans::Record& r, const char* a, const char* a_label, const char* b,
                         const char* b_label) {
    std::string out;
    for (const auto& [field, label] : {std::make_pair(a, a_label), std::make_pair(b, b_label)})
        if (const auto* v = r.find(field); v && std::get<bool>(*v))
            out += (out.empty() ? "" : ",") + std::string(label);
    return out;
}

void print_ranking(const std::vector<RankingColumn>& columns, const std::vector<plans::Record>& records,
                   const std::vector<int64_t>& ranking, int top, bool priced, bool capacity) {
    std::vector<const RankingColumn*> shown;
    // A field some records have and others do not (an autoscaled candidate's) varies too.
    auto varies = [&](const char* field) {
        const plans::FieldValue* first = nullptr;
        bool seen = false, absent = false;
        for (const plans::Record& r : records) {
            const plans::FieldValue* v = r.find(field);
            absent = absent || !v;
            if (!v) continue;
            if (first && !(*v == *first)) return true;
            first = v;
            seen = true;
        }
        return seen && absent;
    };
    for (const RankingColumn& c : columns)
        if (c.shown == ColumnShown::Always || (c.shown == ColumnShown::Priced && priced) ||
            (c.shown == ColumnShown::Capacity && capacity) || (c.shown == ColumnShown::Varies && varies(c.field)))
            shown.push_back(&c);
    auto cell = [](const RankingColumn& c, const std::string& text) {
        std::printf(c.left ? "%-*s" : "%*s", c.width, text.c_str());
    };
    std::printf("\n");
    for (size_t i = 0; i < shown.size(); ++i) {
        if (i) std::printf(" ");
        cell(*shown[i], shown[i]->header);
    }
    std::printf("\n");
    const size_t rows = std::min<size_t>(ranking.size(), static_cast<size_t>(std::max(0, top)));
    char buf[64];
    for (size_t k = 0; k < rows; ++k) {
        const plans::Record& r = records[static_cast<size_t>(ranking[k])];
        for (size_t i = 0; i < shown.size(); ++i) {
            const RankingColumn& c = *shown[i];
            if (i) std::printf(" ");
            const plans::FieldValue* v = c.field ? r.find(c.field) : nullptr;
            if (c.text) cell(c, c.text(r));
            else if (!c.field) cell(c, std::to_string(k + 1));
            else if (!v && c.shown == ColumnShown::Varies) cell(c, "-");  // a field this candidate has not
            else if (v && std::holds_alternative<std::string>(*v)) cell(c, std::get<std::string>(*v));
            else if (v && std::holds_alternative<int64_t>(*v)) cell(c, std::to_string(std::get<int64_t>(*v)));
            else {
                const double x = v && std::holds_alternative<double>(*v) ? std::get<double>(*v) : 0.0;
                std::snprintf(buf, sizeof buf, "%.*f%s", c.precision, x * c.scale, c.suffix);
                cell(c, buf);
            }
        }
        std::printf("\n");
    }
}

int cmd_search(const Args& a) {
    const auto catalog = scenarios::load_catalog();
    const plans::Scenario s = scenarios::load_scenario(one_file(a), *catalog, a.sets);
    for (const auto& w : s.warnings) std::cerr << "fathom: warning: " << printable(w.text()) << "\n";
    if (s.serving()) return cmd_search_serving(a, s, catalog);
    if (s.rl() && !a.html.empty())
        throw sim::InputError("--html: not yet for RL searches (kind: rl); --json writes their results", s.file);
    if (s.rl()) return cmd_search_rl(a, s, catalog);
    const plans::SearchSpace space = s.search.value_or(plans::SearchSpace{});
    const plans::EvaluationContext ctx = cli_context(catalog, s.seed, a);
    const MpiWorld mpi = mpi_world();
    plans::SearchOptions opt = search_options(a, mpi);
    plans::SearchResult r;
    const auto start = std::chrono::steady_clock::now();
    if (!run_search(
            s.file, "search: plans", mpi, opt, r,
            [&](const plans::SearchOptions& o) {
                return plans::search_training(s.model, s.cluster, *s.training(), space, ctx, o);
            },
            plans::encode_search_share, plans::merge_search_share,
            [&](plans::SearchResult& x) { plans::finalize_training_search(x, space); }))
        return 0;  // another MPI rank: rank 0 reports
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    print_training_header(s, space, r);
    print_counts(r, "out of memory (estimate)", wall, opt.threads, mpi, "%.0f");
    auto records = candidate_records(r.candidates, plans::training_candidate_fields(), space.objective);
    auto csv_columns = plans::candidate_columns(plans::training_candidate_fields());
    for (auto& c : plans::add_interval_fields(records, "tokens_per_s", catalog->intervals(),
                                              plans::training_regime(s.model), s.cluster.accelerator))
        csv_columns.push_back(c);
    print_ranking(training_columns(), plans::training_candidate_fields(), records, r.ranking, space.top,
                  space.price_per_gpu_hour > 0, false);
    nlohmann::json gap;
    if (r.ranking.size() >= 2 && space.top >= 2)
        gap =
            print_rank_gap(catalog->intervals(), plans::training_regime(s.model),
                           r.candidates[static_cast<size_t>(r.ranking[0])].goodput_tokens_per_s,
                           r.candidates[static_cast<size_t>(r.ranking[1])].goodput_tokens_per_s, s.cluster.accelerator);
    const nlohmann::json adaptive = print_training_findings(s, space, r);
    const nlohmann::json runs = s.run ? print_run_search(s, space, r, ctx, opt) : nlohmann::json();
    if (!a.out.empty()) write_file(a.out, records_csv(records, csv_columns));
    if (!a.json.empty() || !a.html.empty()) {
        nlohmann::json j = search_json(r, records);
        j["scenario"] = s.name;
        add_plan_keys(j, s, a, [&](int64_t i) {
            return plans::changed_training_keys(*s.training(), r.candidates[static_cast<size_t>(i)].plan);
        });
        j["objective"] = sim::name(space.objective);
        j["adaptive_run"] = adaptive;
        j["rank_gap"] = gap;
        j["whole_runs"] = runs;
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, s.name, &s, [&](report::Page& page) { report::add_search(page, j); });
    }
    return 0;
}

}  // namespace fathom::cli
