// `fathom search` on a training scenario with a `run` section: the whole runs of the plans that fit,
// crossed with the run settings the search lists, ranked by time to target (plans/run_search.h).
#include "plans/run_search.h"
#include "tools/cli/cli.h"
#include "tools/cli/search_output.h"

#include <algorithm>
#include <cstdio>

namespace fathom::cli {

namespace {

std::string spares_text(const plans::Record& r) {
    const auto* v = r.find("spare_nodes");
    const int64_t n = v ? std::get<int64_t>(*v) : -1;
    return n < 0 ? "unlimited" : std::to_string(n);
}

// Declarative table: the run ranking's columns.
const std::vector<RankingColumn>& run_columns() {
    static const std::vector<RankingColumn> columns = {
        {"rank", nullptr, 4},
        {"dp", "dp", 4},
        {"tp", "tp", 3},
        {"pp", "pp", 3},
        {"cp", "cp", 3},
        {"mb", "micro_batch_size", 3},
        {"gb", "global_batch_size", 6},
        {"interval", "checkpoint_interval_s", 10, 1, 1.0 / 60, " min"},
        {"method", "checkpoint_method", 6, 0, 1, "", true},
        {"spares", nullptr, 9, 0, 1, "", true, ColumnShown::Always, spares_text},
        {"recovery", "recovery", 8, 0, 1, "", true},
        {"step_s", "step_time_s", 8, 3},
        {"p50_days", "time_to_target_s.p50", 9, 2, 1.0 / 86400},
        {"p10", "time_to_target_s.p10", 7, 2, 1.0 / 86400},
        {"p90", "time_to_target_s.p90", 7, 2, 1.0 / 86400},
        {"ettr", "ettr", 6, 3},
    };
    return columns;
}

}  // namespace

nlohmann::json print_run_search(const plans::Scenario& s, const plans::SearchSpace& space,
                                const plans::SearchResult& plans, const plans::EvaluationContext& ctx,
                                const plans::SearchOptions& options) {
    plans::SearchOptions opt = options;
    opt.partition = {};
    opt.time_limit_s = 0;
    plans::RunSearchResult r;
    {
        Progress bar("search: whole runs");
        opt.progress = [&bar](int64_t d, int64_t t) { bar(d, t); };
        r = naming_file(s.file, [&] { return plans::search_runs(s, space, plans, ctx, opt); });
    }
    std::printf(
        "\nwhole runs      %lld plans that fit x %lld run settings, %d seeds each: %lld simulated, %lld "
        "cannot run; ranked by median time to target\n",
        static_cast<long long>(r.plans), static_cast<long long>(r.settings), s.run->seeds,
        static_cast<long long>(r.simulated), static_cast<long long>(r.refused));
    const std::vector<plans::Record> records = plans::run_search_records(r, plans);
    print_ranking(run_columns(), records, r.ranking, space.top, false, false);
    // The scenario's own plan and run settings, when the search tried them.
    const plans::RunRequest& own = *s.run;
    for (size_t k = 0; k < r.ranking.size(); ++k) {
        const plans::RunCandidate& c = r.candidates[static_cast<size_t>(r.ranking[k])];
        const plans::RunRequest& q = c.request;
        if (plans.candidates[static_cast<size_t>(c.plan)].plan != *s.training() ||
            q.checkpoint_interval_s != own.checkpoint_interval_s || q.method != own.method ||
            q.spare_nodes != own.spare_nodes || q.recovery != own.recovery)
            continue;
        const double best = r.candidates[static_cast<size_t>(r.ranking[0])].summary.wall_p50_s;
        std::printf("\nscenario's run  rank %zu of %zu (%.2f days; the best %+.1f%%)\n", k + 1, r.ranking.size(),
                    c.summary.wall_p50_s / 86400, 100 * (best / c.summary.wall_p50_s - 1));
        break;
    }
    // Why the others cannot run, each reason once.
    std::vector<std::string> reasons;
    for (const plans::RunCandidate& c : r.candidates)
        if (!c.ok && std::find(reasons.begin(), reasons.end(), c.reason) == reasons.end()) reasons.push_back(c.reason);
    for (size_t i = 0; i < reasons.size() && i < 5; ++i)
        std::printf("cannot run      %s\n", printable(reasons[i]).c_str());
    nlohmann::json out = nlohmann::json::array();
    for (const plans::Record& x : records) out.push_back(record_json(x));
    return {{"runs", out}, {"ranking", r.ranking}};
}

}  // namespace fathom::cli
