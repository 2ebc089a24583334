// `fathom search SERVING.yaml`: the serving plans of the scenario's `search` section, ranked
// (plans/serving_search.h).
#include "plans/search_report.h"
#include "plans/serving_search.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/mpi.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

namespace fathom::cli {
namespace {

using workloads::serving::Pool;
using workloads::serving::PoolLayout;
using workloads::serving::ServingPlan;

bool same_plan(const ServingPlan& a, const ServingPlan& b) {
    auto same_pool = [](const Pool& x, const Pool& y) {
        const PoolLayout &l = *x.layout, &m = *y.layout;
        return x.role == y.role && l.tp == m.tp && l.pp == m.pp && l.replicas == m.replicas &&
               l.accelerator.id == m.accelerator.id;
    };
    const std::vector<Pool> pa = a.pools(), pb = b.pools();
    if (!std::equal(pa.begin(), pa.end(), pb.begin(), pb.end(), same_pool)) return false;
    return a.batching.policy == b.batching.policy && a.batching.max_num_seqs == b.batching.max_num_seqs &&
           a.batching.max_num_batched_tokens == b.batching.max_num_batched_tokens;
}

}  // namespace

int cmd_search_serving(const Args& a, const plans::Scenario& s, std::shared_ptr<const plans::Catalog> catalog) {
    const plans::SearchSpace space = s.search.value_or(plans::SearchSpace{});
    const ServingPlan& base = *s.serving();
    const plans::EvaluationContext ctx = cli_context(catalog, s.seed, a);
    const MpiWorld mpi = mpi_world();
    plans::SearchOptions opt = search_options(a, mpi);
    plans::ServingSearchResult r;
    const auto start = std::chrono::steady_clock::now();
    if (!run_search(
            s.file, "search: serving plans", mpi, opt, r,
            [&](const plans::SearchOptions& o) {
                return plans::search_serving(s.model, s.cluster, base, space, ctx, s.seed, o);
            },
            plans::encode_serving_search_share, plans::merge_serving_search_share,
            [&](plans::ServingSearchResult& x) { plans::finalize_serving_search(x, space); }))
        return 0;  // another MPI rank: rank 0 reports
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int64_t total = static_cast<int64_t>(r.candidates.size());
    const auto& slo = base.slo;
    std::printf("scenario        %s: %s, up to %d GPUs\n", s.name.c_str(), s.model.name.c_str(), s.cluster.gpus());
    std::printf("objective       %s; SLO ttft <= %.0f ms, tpot <= %.0f ms for %.0f%% of requests\n",
                space.objective.c_str(), 1e3 * slo.ttft_s, 1e3 * slo.tpot_s, 100 * slo.target_attainment);
    std::printf(
        "candidates      %lld%s: %lld simulated, %lld pruned by plan checks, %lld out of memory, %lld skipped\n",
        static_cast<long long>(total), r.truncated ? " (cut by --max-candidates)" : "",
        static_cast<long long>(r.evaluated), static_cast<long long>(r.pruned), static_cast<long long>(r.out_of_memory),
        static_cast<long long>(r.skipped));
    std::printf("time            %.2f s on %d threads%s, %.1f candidates/s\n", wall, opt.threads,
                mpi.size > 1 ? (" x " + std::to_string(mpi.size) + " MPI ranks").c_str() : "",
                wall > 0 ? total / wall : 0.0);
    const bool capacity = space.objective == "capacity";
    std::printf("\n%4s %-28s %4s %-9s %5s %6s %7s %9s %9s %9s %9s %9s %9s%s%s %s\n", "rank", "layout", "gpus", "policy",
                "seqs", "tokens", "slo_att", "good/gpu", "otok/gpu", "ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90",
                capacity ? "  cap_rps" : "", r.priced ? "  $/1k-good" : "", "pareto");
    const size_t rows = std::min<size_t>(r.ranking.size(), static_cast<size_t>(space.top));
    for (size_t k = 0; k < rows; ++k) {
        const auto& c = r.candidates[static_cast<size_t>(r.ranking[k])];
        char cap[32] = "", cost[32] = "";
        if (capacity) std::snprintf(cap, sizeof cap, " %8.2f", c.capacity_requests_per_s);
        if (r.priced) std::snprintf(cost, sizeof cost, " %10.4f", c.usd_per_1k_good_requests);
        std::string pareto = c.pareto_cost ? "cost" : "";
        if (c.pareto_latency) pareto += pareto.empty() ? "ttft" : ",ttft";
        std::printf("%4zu %-28s %4d %-9s %5lld %6lld %6.1f%% %9.3f %9.0f %7.0fms %7.0fms %7.1fms %7.1fms%s%s %s\n",
                    k + 1, c.layout.c_str(), c.gpus, c.plan.batching.policy.c_str(),
                    static_cast<long long>(c.plan.batching.max_num_seqs),
                    static_cast<long long>(c.plan.batching.max_num_batched_tokens), 100 * c.slo_attainment,
                    c.goodput_requests_per_s / c.gpus, c.output_tokens_per_s / c.gpus, 1e3 * c.ttft_p50_s,
                    1e3 * c.ttft_p90_s, 1e3 * c.tpot_p50_s, 1e3 * c.tpot_p90_s, cap, cost, pareto.c_str());
    }
    const auto own = std::find_if(r.candidates.begin(), r.candidates.end(),
                                  [&](const plans::ServingCandidate& c) { return same_plan(c.plan, base); });
    if (own == r.candidates.end()) {
        std::printf("\nscenario's plan is not in the searched space\n");
    } else if (own->status != plans::CandidateStatus::Evaluated) {
        std::printf("\nscenario's plan %s: %s\n", sim::name(own->status), own->reason.c_str());
    } else {
        const size_t rank =
            static_cast<size_t>(std::find(r.ranking.begin(), r.ranking.end(), own->index) - r.ranking.begin());
        std::printf("\nscenario's plan rank %zu of %zu (%s, SLO attainment %.1f%%)\n", rank + 1, r.ranking.size(),
                    own->layout.c_str(), 100 * own->slo_attainment);
    }
    std::map<std::string, int64_t> reasons;
    for (const auto& c : r.candidates)
        if (c.status == plans::CandidateStatus::Pruned || c.status == plans::CandidateStatus::OutOfMemory)
            ++reasons[c.reason.substr(0, c.reason.find('\n'))];
    if (!reasons.empty()) {
        std::vector<std::pair<int64_t, std::string>> by_count;
        for (const auto& [why, n] : reasons) by_count.emplace_back(-n, why);
        std::sort(by_count.begin(), by_count.end());
        std::printf("not simulated   ");
        for (size_t k = 0; k < std::min<size_t>(3, by_count.size()); ++k)
            std::printf("%s%lld x %s\n", k ? "                " : "", static_cast<long long>(-by_count[k].first),
                        by_count[k].second.c_str());
    }
    std::vector<plans::Record> records;
    for (const auto& c : r.candidates) records.push_back(plans::serving_candidate_record(c, capacity));
    if (!a.out.empty()) write_file(a.out, records_csv(records, plans::serving_candidate_columns()));
    if (!a.json.empty()) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto& row : records) all.push_back(record_json(row));
        write_json(a.json, {{"scenario", s.name},
                            {"kind", "serving"},
                            {"objective", space.objective},
                            {"candidates_total", total},
                            {"evaluated", r.evaluated},
                            {"pruned", r.pruned},
                            {"out_of_memory", r.out_of_memory},
                            {"skipped", r.skipped},
                            {"truncated", r.truncated},
                            {"ranking", r.ranking},
                            {"candidates", all}});
    }
    return 0;
}

}  // namespace fathom::cli
