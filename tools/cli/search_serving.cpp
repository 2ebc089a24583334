// `fathom search SERVING.yaml`: the serving plans of the scenario's `search` section, ranked
// (plans/serving_search.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "plans/serving_search.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "tools/cli/cli.h"
#include "tools/cli/mpi.h"

namespace fathom::cli {
namespace {

using workloads::serving::PoolLayout;
using workloads::serving::ServingPlan;

const PoolLayout& first_pool(const ServingPlan& p) { return p.disaggregated() ? *p.prefill : p.replica; }

nlohmann::json candidate_json(const plans::ServingCandidate& c, const std::string& objective) {
    const ServingPlan& p = c.plan;
    const PoolLayout& l = first_pool(p);
    nlohmann::json j = {{"index", c.index},
                        {"status", plans::candidate_status_name(c.status)},
                        {"layout", c.layout},
                        {"accelerator", l.accelerator.id},
                        {"gpus", p.gpus()},
                        {"tp", l.tp},
                        {"pp", l.pp},
                        {"replicas", p.disaggregated() ? p.prefill->replicas + p.decode->replicas : p.replica.replicas},
                        {"prefill_replicas", p.disaggregated() ? p.prefill->replicas : 0},
                        {"decode_replicas", p.disaggregated() ? p.decode->replicas : 0},
                        {"policy", p.batching.policy},
                        {"max_num_seqs", p.batching.max_num_seqs},
                        {"max_num_batched_tokens", p.batching.max_num_batched_tokens}};
    if (!c.reason.empty()) j["reason"] = c.reason;
    if (c.usd_per_hour > 0) j["usd_per_hour"] = c.usd_per_hour;
    if (c.kv_tokens_per_replica > 0) j["kv_tokens_per_replica"] = c.kv_tokens_per_replica;
    if (c.status == plans::CandidateStatus::Evaluated) {
        j["slo_attainment"] = c.slo_attainment;
        j["meets_slo"] = c.meets_slo;
        j["goodput_requests_per_s"] = c.goodput_requests_per_s;
        j["goodput_requests_per_s_per_gpu"] = c.goodput_requests_per_s / c.gpus;
        j["requests_per_s"] = c.requests_per_s;
        j["output_tokens_per_s"] = c.output_tokens_per_s;
        j["output_tokens_per_s_per_gpu"] = c.output_tokens_per_s / c.gpus;
        j["ttft_p50_s"] = c.ttft_p50_s;
        j["ttft_p90_s"] = c.ttft_p90_s;
        j["tpot_p50_s"] = c.tpot_p50_s;
        j["tpot_p90_s"] = c.tpot_p90_s;
        if (c.usd_per_1k_good_requests > 0) j["usd_per_1k_good_requests"] = c.usd_per_1k_good_requests;
        if (c.joules_per_output_token > 0) j["joules_per_output_token_at_tdp"] = c.joules_per_output_token;
        if (objective == "capacity") j["capacity_requests_per_s"] = c.capacity_requests_per_s;
        j["score"] = c.score;
        j["pareto_goodput_cost"] = c.pareto_cost;
        j["pareto_throughput_ttft"] = c.pareto_latency;
    }
    return j;
}

std::string candidates_csv(const plans::ServingSearchResult& r, const std::string& objective) {
    static const char* const columns[] = {"index", "status", "layout", "accelerator", "gpus", "tp", "pp", "replicas",
                                          "prefill_replicas", "decode_replicas", "policy", "max_num_seqs",
                                          "max_num_batched_tokens", "slo_attainment", "meets_slo", "goodput_requests_per_s",
                                          "goodput_requests_per_s_per_gpu", "requests_per_s", "output_tokens_per_s",
                                          "output_tokens_per_s_per_gpu", "ttft_p50_s", "ttft_p90_s", "tpot_p50_s", "tpot_p90_s",
                                          "capacity_requests_per_s", "usd_per_hour", "usd_per_1k_good_requests",
                                          "joules_per_output_token_at_tdp", "kv_tokens_per_replica", "score",
                                          "pareto_goodput_cost", "pareto_throughput_ttft", "reason"};
    std::string out;
    for (const char* c : columns) out += std::string(out.empty() ? "" : ",") + c;
    out += "\n";
    char buf[64];
    for (const auto& c : r.candidates) {
        const nlohmann::json j = candidate_json(c, objective);
        std::string row;
        for (const char* col : columns) {
            if (col != columns[0]) row += ",";
            if (!j.contains(col)) continue;
            const auto& v = j[col];
            if (v.is_boolean()) row += v.get<bool>() ? "1" : "0";
            else if (v.is_number_integer()) row += std::to_string(v.get<long long>());
            else if (v.is_number()) {
                std::snprintf(buf, sizeof buf, "%.9g", v.get<double>());
                row += buf;
            } else {
                std::string text = v.get<std::string>();
                for (char& ch : text)
                    if (ch == '"' || ch == '\n') ch = '\'';
                row += "\"" + text + "\"";
            }
        }
        out += row + "\n";
    }
    return out;
}

bool same_plan(const ServingPlan& a, const ServingPlan& b) {
    if (a.disaggregated() != b.disaggregated()) return false;
    auto same_pool = [](const PoolLayout& x, const PoolLayout& y) {
        return x.tp == y.tp && x.pp == y.pp && x.replicas == y.replicas && x.accelerator.id == y.accelerator.id;
    };
    if (a.disaggregated() ? !(same_pool(*a.prefill, *b.prefill) && same_pool(*a.decode, *b.decode)) : !same_pool(a.replica, b.replica))
        return false;
    return a.batching.policy == b.batching.policy && a.batching.max_num_seqs == b.batching.max_num_seqs &&
           a.batching.max_num_batched_tokens == b.batching.max_num_batched_tokens;
}

}  // namespace

int cmd_search_serving(const Args& a, const plans::Scenario& s, std::shared_ptr<const plans::Catalog> catalog) {
    const plans::SearchSpace space = s.search.value_or(plans::SearchSpace{});
    const ServingPlan& base = *s.serving();
    const plans::EvaluationContext ctx = scenarios::make_context(catalog, s.seed, a.algorithm);
    plans::SearchOptions opt;
    const MpiWorld mpi = mpi_world();
    opt.partition = {mpi.rank, mpi.size};
    opt.threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    opt.max_candidates = a.max_candidates;
    opt.time_limit_s = a.time_limit;
    plans::ServingSearchResult r;
    const auto start = std::chrono::steady_clock::now();
    {
        Progress bar("search: serving plans");
        if (mpi.rank == 0) opt.progress = [&bar](int64_t d, int64_t t) { bar(d, t); };
        try {
            r = plans::search_serving(s.model, s.cluster, base, space, ctx, s.seed, opt);
        } catch (const sim::InputError& e) {
            throw sim::InputError(e.bare_message(), s.file, 0, e.key());
        }
    }
    // Under mpirun each rank searched its share; rank 0 merges them and reports.
    if (mpi.size > 1) {
        const auto shares = mpi_gather(plans::encode_serving_search_share(r, opt.partition));
        if (mpi.rank != 0) return 0;
        for (size_t k = 1; k < shares.size(); ++k) plans::merge_serving_search_share(r, shares[k]);
        plans::finalize_serving_search(r, space);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int64_t total = static_cast<int64_t>(r.candidates.size());
    const auto& slo = base.slo;
    std::printf("scenario        %s: %s, up to %d GPUs\n", s.name.c_str(), s.model.name.c_str(), s.cluster.gpus());
    std::printf("objective       %s; SLO ttft <= %.0f ms, tpot <= %.0f ms for %.0f%% of requests\n", space.objective.c_str(),
                1e3 * slo.ttft_s, 1e3 * slo.tpot_s, 100 * slo.target_attainment);
    std::printf("candidates      %lld%s: %lld simulated, %lld pruned by plan checks, %lld out of memory, %lld skipped\n",
                static_cast<long long>(total), r.truncated ? " (cut by --max-candidates)" : "", static_cast<long long>(r.evaluated),
                static_cast<long long>(r.pruned), static_cast<long long>(r.out_of_memory), static_cast<long long>(r.skipped));
    std::printf("time            %.2f s on %d threads%s, %.1f candidates/s\n", wall, opt.threads,
                mpi.size > 1 ? (" x " + std::to_string(mpi.size) + " MPI ranks").c_str() : "", wall > 0 ? total / wall : 0.0);
    const bool capacity = space.objective == "capacity";
    std::printf("\n%4s %-28s %4s %-9s %5s %6s %7s %9s %9s %9s %9s %9s %9s%s%s %s\n", "rank", "layout", "gpus", "policy", "seqs",
                "tokens", "slo_att", "good/gpu", "otok/gpu", "ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90",
                capacity ? "  cap_rps" : "", r.priced ? "  $/1k-good" : "", "pareto");
    const size_t rows = std::min<size_t>(r.ranking.size(), static_cast<size_t>(space.top));
    for (size_t k = 0; k < rows; ++k) {
        const auto& c = r.candidates[static_cast<size_t>(r.ranking[k])];
        char cap[32] = "", cost[32] = "";
        if (capacity) std::snprintf(cap, sizeof cap, " %8.2f", c.capacity_requests_per_s);
        if (r.priced) std::snprintf(cost, sizeof cost, " %10.4f", c.usd_per_1k_good_requests);
        std::string pareto = c.pareto_cost ? "cost" : "";
        if (c.pareto_latency) pareto += pareto.empty() ? "ttft" : ",ttft";
        std::printf("%4zu %-28s %4d %-9s %5lld %6lld %6.1f%% %9.3f %9.0f %7.0fms %7.0fms %7.1fms %7.1fms%s%s %s\n", k + 1,
                    c.layout.c_str(), c.gpus, c.plan.batching.policy.c_str(), static_cast<long long>(c.plan.batching.max_num_seqs),
                    static_cast<long long>(c.plan.batching.max_num_batched_tokens), 100 * c.slo_attainment,
                    c.goodput_requests_per_s / c.gpus, c.output_tokens_per_s / c.gpus, 1e3 * c.ttft_p50_s, 1e3 * c.ttft_p90_s,
                    1e3 * c.tpot_p50_s, 1e3 * c.tpot_p90_s, cap, cost, pareto.c_str());
    }
    const auto own = std::find_if(r.candidates.begin(), r.candidates.end(),
                                  [&](const plans::ServingCandidate& c) { return same_plan(c.plan, base); });
    if (own == r.candidates.end()) {
        std::printf("\nscenario's plan is not in the searched space\n");
    } else if (own->status != plans::CandidateStatus::Evaluated) {
        std::printf("\nscenario's plan %s: %s\n", plans::candidate_status_name(own->status), own->reason.c_str());
    } else {
        const size_t rank = static_cast<size_t>(std::find(r.ranking.begin(), r.ranking.end(), own->index) - r.ranking.begin());
        std::printf("\nscenario's plan rank %zu of %zu (%s, SLO attainment %.1f%%)\n", rank + 1, r.ranking.size(), own->layout.c_str(),
                    100 * own->slo_attainment);
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
            std::printf("%s%lld x %s\n", k ? "                " : "", static_cast<long long>(-by_count[k].first), by_count[k].second.c_str());
    }
    if (!a.out.empty()) write_file(a.out, candidates_csv(r, space.objective));
    if (!a.json.empty()) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto& c : r.candidates) all.push_back(candidate_json(c, space.objective));
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
