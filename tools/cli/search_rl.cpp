// `fathom search RL.yaml`: the RL plans of the scenario's `search` section, ranked
// (plans/rl_search.h): a table of the best, every candidate as CSV (-o) or JSON (--json).
#include "plans/report.h"
#include "plans/rl_search.h"
#include "plans/search_objective.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/mpi.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

namespace fathom::cli {

int cmd_search_rl(const Args& a, const plans::Scenario& s, std::shared_ptr<const plans::Catalog> catalog) {
    const plans::SearchSpace space = s.search.value_or(plans::SearchSpace{});
    const MpiWorld mpi = mpi_world();
    if (mpi.size > 1) throw sim::InputError("an RL search runs on one machine (its ranks over MPI: not yet)", s.file);
    const plans::EvaluationContext ctx = cli_context(catalog, s.seed, a);
    plans::SearchOptions opt = search_options(a, mpi);
    Progress bar("search: rl plans");
    opt.progress = [&bar](int64_t done, int64_t total) { bar(done, total); };
    const auto start = std::chrono::steady_clock::now();
    const plans::RlSearchResult r =
        naming_file(s.file, [&] { return plans::search_rl(s.model, s.cluster, *s.rl(), space, ctx, s.seed, opt); });
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("scenario        %s: %s, %d GPUs\n", s.name.c_str(), s.model.name.c_str(), s.cluster.gpus());
    std::printf("objective       %s\n", sim::name(space.objective));
    std::printf(
        "candidates      %zu: %lld evaluated, %lld pruned, %lld out of memory, %lld skipped (%.1f s, %d "
        "threads)%s\n",
        r.candidates.size(), static_cast<long long>(r.evaluated), static_cast<long long>(r.pruned),
        static_cast<long long>(r.out_of_memory), static_cast<long long>(r.skipped), wall, opt.threads,
        r.truncated ? (", " + r.truncation).c_str() : "");
    std::printf("\n%4s  %-52s %9s %9s %9s %8s %8s %8s %6s %10s\n", "rank", "layout", "iter_s", "samp/s", "samp/gpu",
                "roll_s", "upd_s", "fwd_s", "stale", "$/1k-samp");
    std::vector<plans::Record> rows;
    for (size_t k = 0; k < r.ranking.size(); ++k) {
        const plans::RlCandidate& c = r.candidates[static_cast<size_t>(r.ranking[k])];
        if (static_cast<int>(k) < space.top)
            std::printf("%4zu  %-52s %9.1f %9.2f %9.4f %8.1f %8.1f %8.1f %6.2f %10s\n", k + 1, c.layout.c_str(),
                        c.iteration_s, c.samples_per_s, c.samples_per_s_per_gpu, c.rollout_s, c.update_s, c.forward_s,
                        c.staleness_mean,
                        c.usd_per_1k_samples > 0 ? std::to_string(c.usd_per_1k_samples).substr(0, 8).c_str() : "-");
        rows.push_back(plans::rl_candidate_record(c, static_cast<int64_t>(k) + 1));
    }
    for (const plans::RlCandidate& c : r.candidates)
        if (c.status != plans::CandidateStatus::Evaluated) rows.push_back(plans::rl_candidate_record(c, 0));
    if (r.ranking.empty()) std::printf("      (no candidate could run)\n");
    // Why candidates did not run, each reason once with its count; what the pruning rules dropped.
    std::map<std::string, int64_t> reasons;
    for (const plans::RlCandidate& c : r.candidates)
        if (c.status == plans::CandidateStatus::Pruned || c.status == plans::CandidateStatus::OutOfMemory)
            ++reasons[c.reason];
    for (const auto& [reason, count] : reasons)
        std::printf("not simulated   %lld: %s\n", static_cast<long long>(count), printable(reason).c_str());
    const auto& rules = plans::rl_prune_rules();
    for (size_t i = 0; i < rules.size() && i < r.dropped.size(); ++i)
        if (r.dropped[i] > 0)
            std::printf("dropped         %lld by %s: %s\n", static_cast<long long>(r.dropped[i]), rules[i].name,
                        rules[i].reason);
    if (!a.out.empty()) {
        std::vector<std::string> columns;
        for (const auto& [name, value] : rows.empty() ? plans::Record{}.fields : rows.front().fields)
            columns.push_back(name);
        write_file(a.out, records_csv(rows, columns));
    }
    if (!a.json.empty()) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& row : rows) j.push_back(record_json(row));
        write_json(a.json, j);
    }
    return 0;
}

}  // namespace fathom::cli
