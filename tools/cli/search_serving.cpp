// `fathom search SERVING.yaml`: the serving plans of the scenario's `search` section, ranked
// (plans/serving_search.h).
#include "plans/search_objective.h"
#include "plans/search_report.h"
#include "plans/serving_search.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/html.h"
#include "tools/cli/mpi.h"
#include "tools/cli/search_output.h"
#include "workloads/serving/formats.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
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
    return a.batching.policy == b.batching.policy && a.autoscale.policy == b.autoscale.policy &&
           a.autoscale.target == b.autoscale.target && a.batching.max_num_seqs == b.batching.max_num_seqs &&
           a.batching.max_num_batched_tokens == b.batching.max_num_batched_tokens;
}

// Declarative table: the serving ranking's columns.
const std::vector<RankingColumn>& serving_columns() {
    static const std::vector<RankingColumn> columns = {
        {"rank", nullptr, 4},
        {"layout", "layout", 28, 0, 1, "", true},
        {"gpus", "gpus", 4},
        {"policy", "policy", 9, 0, 1, "", true},
        {"format", "format", 6, 0, 1, "", true, ColumnShown::Varies},
        {"autoscale", "autoscale", 10, 0, 1, "", true, ColumnShown::Varies},
        {"seqs", "max_num_seqs", 5},
        {"tokens", "max_num_batched_tokens", 6},
        {"slo_att", "slo_attainment", 7, 1, 100, "%"},
        {"good/gpu", "goodput_requests_per_s_per_gpu", 9, 3},
        {"otok/gpu", "output_tokens_per_s_per_gpu", 9},
        {"ttft_p50", "ttft_p50_s", 9, 0, 1e3, "ms"},
        {"ttft_p90", "ttft_p90_s", 9, 0, 1e3, "ms"},
        {"tpot_p50", "tpot_p50_s", 9, 1, 1e3, "ms"},
        {"tpot_p90", "tpot_p90_s", 9, 1, 1e3, "ms"},
        {"cap_rps", "capacity_requests_per_s", 8, 2, 1, "", false, ColumnShown::Capacity},
        {"gpu_h", "gpu_hours", 8, 2, 1, "", false, ColumnShown::Varies},
        {"$/1k-good", "usd_per_1k_good_requests", 10, 4, 1, "", false, ColumnShown::Priced},
        {"pareto", nullptr, 0, 0, 1, "", true, ColumnShown::Always,
         [](const plans::Record& r) {
             return pareto_flags(r, "pareto_goodput_cost", "cost", "pareto_throughput_ttft", "ttft");
         }},
    };
    return columns;
}

void print_serving_findings(const ServingPlan& base, const plans::ServingSearchResult& r) {
    print_own_plan(
        r.candidates, r.ranking, [&](const plans::ServingCandidate& c) { return same_plan(c.plan, base); },
        [](const plans::ServingCandidate& own, const plans::ServingCandidate&) {
            char buf[64];
            std::snprintf(buf, sizeof buf, ", SLO attainment %.1f%%", 100 * own.slo_attainment);
            return own.layout + buf;
        });
    print_reasons(r.candidates, "not simulated", [](const plans::ServingCandidate& c) {
        return c.status == plans::CandidateStatus::Pruned || c.status == plans::CandidateStatus::OutOfMemory;
    });
}

// The published accuracy cost of each quantized format among the printed candidates.
void print_format_accuracy(const plans::ServingSearchResult& r, int top) {
    std::vector<std::string> seen;
    const size_t rows = std::min<size_t>(r.ranking.size(), static_cast<size_t>(std::max(0, top)));
    for (size_t k = 0; k < rows; ++k) {
        const std::string f =
            workloads::serving::format_name(r.candidates[static_cast<size_t>(r.ranking[k])].plan.kernels);
        if (f == "bf16" || f == "fp16" || std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
        seen.push_back(f);
        if (const auto* format = workloads::serving::find_format(f))
            std::printf("%s%-6s accuracy: %s\n", seen.size() == 1 ? "\n" : "", f.c_str(), format->accuracy);
    }
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
    const auto& slo = base.slo;
    std::printf("scenario        %s: %s, up to %d GPUs\n", s.name.c_str(), s.model.name.c_str(), s.cluster.gpus());
    std::printf("objective       %s; SLO ttft <= %.0f ms, tpot <= %.0f ms for %.0f%% of requests\n",
                sim::name(space.objective), 1e3 * slo.ttft_s, 1e3 * slo.tpot_s, 100 * slo.target_attainment);
    print_counts(r, "out of memory", wall, opt.threads, mpi, "%.1f");
    auto records = candidate_records(r.candidates, plans::serving_candidate_fields(), space.objective);
    auto csv_columns = plans::candidate_columns(plans::serving_candidate_fields());
    for (auto& c : plans::add_interval_fields(records, "output_tokens_per_s", catalog->intervals(),
                                              plans::serving_regime("output_tokens_per_s"), s.cluster.accelerator))
        csv_columns.push_back(c);
    print_ranking(serving_columns(), plans::serving_candidate_fields(), records, r.ranking, space.top, r.priced,
                  plans::objective_rule(space.objective).measures_capacity);
    nlohmann::json gap;
    if (r.ranking.size() >= 2 && space.top >= 2)
        gap = print_rank_gap(catalog->intervals(), plans::serving_regime("output_tokens_per_s"),
                             r.candidates[static_cast<size_t>(r.ranking[0])].score,
                             r.candidates[static_cast<size_t>(r.ranking[1])].score, s.cluster.accelerator);
    print_format_accuracy(r, space.top);
    print_serving_findings(base, r);
    if (!a.out.empty()) write_file(a.out, records_csv(records, csv_columns));
    if (!a.json.empty() || !a.html.empty()) {
        nlohmann::json j = search_json(r, records);
        j["scenario"] = s.name;
        add_plan_keys(j, s, a, [&](int64_t i) {
            return plans::changed_serving_keys(base, r.candidates[static_cast<size_t>(i)].plan);
        });
        j["kind"] = "serving";
        j["objective"] = sim::name(space.objective);
        j["rank_gap"] = gap;
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, s.name, &s, [&](report::Page& page) { report::add_search(page, j); });
    }
    return 0;
}

}  // namespace fathom::cli
