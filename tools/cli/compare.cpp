// `fathom compare`: every case of a measurement file against its prediction.
#include "scenarios/catalog.h"
#include "scenarios/intervals_io.h"
#include "scenarios/measured.h"
#include "scenarios/scenario.h"
#include "tools/cli/cli.h"
#include "tools/cli/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace fathom::cli {

namespace {

using scenarios::CompareResult;

bool is_variant(const CompareResult& r) { return r.id.find('#') != std::string::npos; }

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

// `--case`: what ran for each entry of the case, so a user can see where the error comes from.
void print_case_details(const std::vector<CompareResult>& results) {
    for (const auto& r : results) {
        std::printf("\n%s%s%s\n", r.id.c_str(), r.variant.empty() ? "" : "  variant: ", r.variant.c_str());
        if (!r.ok()) {
            std::printf("  unsupported: %s\n", r.reason.c_str());
            continue;
        }
        if (!r.plan.empty()) std::printf("  plan         %s\n", r.plan.c_str());
        if (!r.stack.empty()) std::printf("  stack        %s\n", r.stack.c_str());
        for (const auto& s : r.assumptions) std::printf("  assumption   %s\n", s.c_str());
        for (const auto& s : r.fill_ins) std::printf("  fill-in      %s\n", s.c_str());
        if (!r.not_modelled.empty()) std::printf("  not modelled %s\n", joined(r.not_modelled).c_str());
        for (const auto& s : r.run_summary) std::printf("  run          %s\n", s.c_str());
        if (r.stages.empty()) continue;
        std::printf("  step time    %.4f s\n", r.step_time_s);
        print_stage_table(r.stages, plans::comm_kinds_of(r.stages), "  ");
    }
}

// The table of simulated cases (or of other_metrics entries); returns their absolute errors.
std::vector<double> print_table(const std::vector<CompareResult>& results, bool variants) {
    std::vector<double> errs;
    std::printf("%-44s %-22s %12s %12s %8s %10s %10s\n", variants ? "case#entry (variant)" : "case", "metric",
                "measured", "predicted", "error", "peak_mem", "capacity");
    for (const auto& r : results) {
        if (!r.ok() || is_variant(r) != variants) continue;
        const bool memory = r.memory_capacity_bytes > 0;  // microbenchmarks have no memory verdict
        std::printf("%-44s %-22s %12.4g %12.4g %+7.1f%% %10s %10s%s\n", r.id.c_str(), r.metric.c_str(), r.measured,
                    r.predicted, 100 * r.error, memory ? gib(r.peak_memory_bytes).c_str() : "-",
                    memory ? gib(r.memory_capacity_bytes).c_str() : "-", r.out_of_memory ? "  OOM" : "");
        if (variants && !r.variant.empty()) std::printf("    variant: %s\n", r.variant.c_str());
        if (!r.range_key.empty()) {
            std::string vs;
            for (int v : r.range_values) vs += (vs.empty() ? "" : ",") + std::to_string(v);
            std::printf(
                "    RANGE: %s not stated, simulated %s in {%s}: %.4g .. %.4g (%+.1f%% .. %+.1f%%); the median "
                "shown\n",
                r.range_key.c_str(), r.range_key.c_str(), vs.c_str(), r.range_low, r.range_high,
                100 * (r.range_low - r.measured) / r.measured, 100 * (r.range_high - r.measured) / r.measured);
        }
        errs.push_back(std::fabs(r.error));
    }
    return errs;
}

// The unsupported cases with their reasons, and the error summary overall and per kind.
void print_summary(const std::vector<CompareResult>& results, const std::vector<double>& errs) {
    std::printf("\nunsupported:\n");
    size_t unsupported = 0;
    for (const auto& r : results)
        if (!r.ok() && !is_variant(r)) {
            std::printf("  %-42s %s\n", r.id.c_str(), r.reason.c_str());
            ++unsupported;
        }
    const double max_abs = errs.empty() ? 0 : *std::max_element(errs.begin(), errs.end());
    std::printf("\n%zu cases simulated, %zu unsupported; median |error| %.1f%%, max |error| %.1f%%\n", errs.size(),
                unsupported, 100 * median_of(errs), 100 * max_abs);
    // Per kind, with the 90th percentile (issue 7's bound for training is on it).
    for (const char* kind : {"training", "serving", "microbench"}) {
        std::vector<double> k;
        for (const auto& r : results)
            if (r.ok() && !is_variant(r) && r.kind == kind) k.push_back(std::fabs(r.error));
        if (k.empty()) continue;
        std::printf("  %-10s %3zu cases: median |error| %.1f%%, p90 %.1f%%, max %.1f%%\n", kind, k.size(),
                    100 * median_of(k), 100 * percentile_of(k, 0.9), 100 * *std::max_element(k.begin(), k.end()));
    }
}

// The 90% bands the residuals give per regime (plans/intervals.h), and how many of the regime's
// measurements fall inside the band of the others (leave-one-out).
void print_bands(const plans::IntervalTable& t, const std::vector<std::optional<scenarios::CaseInterval>>& loo) {
    std::printf(
        "\n90%% bands (split-conformal on |log(predicted / measured)|, per regime; leave-one-out: the "
        "measurements inside the band of the others):\n");
    for (const auto& [regime, b] : t.bands) {
        int in = 0, n = 0;
        for (const auto& c : loo)
            if (c && c->regime == regime) {
                ++n;
                in += c->covered ? 1 : 0;
            }
        if (std::isfinite(b.half_width))
            std::printf("  %-30s %4d cases: x/ %.3f (-%.1f%% .. +%.1f%%); leave-one-out %d of %d inside\n",
                        regime.c_str(), b.cases, std::exp(b.half_width), 100 * (1 - std::exp(-b.half_width)),
                        100 * (std::exp(b.half_width) - 1), in, n);
        else std::printf("  %-30s %4d cases: too few for a finite band\n", regime.c_str(), b.cases);
    }
}

// What each simulated case's source states that fathom does not model.
void print_not_modelled(const std::vector<CompareResult>& results) {
    std::printf("\nstated by the source, not modelled:\n");
    for (const auto& r : results)
        if (r.ok() && !is_variant(r) && !r.not_modelled.empty())
            std::printf("  %-42s %s\n", r.id.c_str(), joined(r.not_modelled).c_str());
}

// One stage of a case's step in the --json output: its busy times ("<kind>_comm_s", the kinds
// fathom has always written and any other with traffic) and memory.
nlohmann::json stage_json(const workloads::StageReport& x) {
    plans::Record rec;
    rec.add("layers", int64_t{x.layers});
    rec.add("compute_s", x.compute_s);
    plans::add_comm_columns(rec, x, plans::comm_kinds_of({x}));
    rec.add("exposed_comm_s", x.exposed_comm_s);
    rec.add("idle_s", x.idle_s);
    rec.add("peak_memory_bytes", x.memory.total());
    return record_json(rec);
}

nlohmann::json compare_json(const std::vector<CompareResult>& results, const nlohmann::json& ranks) {
    nlohmann::json arr = nlohmann::json::array();
    const auto loo = scenarios::leave_one_out_intervals(results);
    for (size_t i = 0; i < results.size(); ++i) {
        const CompareResult& r = results[i];
        nlohmann::json j = record_json(scenarios::compare_record(r));
        if (loo[i])
            j["interval_90"] = {{"regime", loo[i]->regime},
                                {"low", loo[i]->low},
                                {"high", std::isfinite(loo[i]->high) ? nlohmann::json(loo[i]->high) : nullptr},
                                {"covered", loo[i]->covered}};
        if (r.ok() && !r.stages.empty()) {
            nlohmann::json st = nlohmann::json::array();
            for (const auto& x : r.stages) st.push_back(stage_json(x));
            j["stages"] = st;
        }
        if (r.ok() && !r.range_key.empty()) j["range"]["values"] = r.range_values;
        for (const auto& rank : ranks)
            if (rank["id"] == r.id) j["plan_rank"] = rank;
        arr.push_back(j);
    }
    return arr;
}

}  // namespace

int cmd_compare(const Args& a) {
    plans::EvaluationContext ctx = cli_context(scenarios::load_catalog(), 1, a);
    if (!a.network.empty()) {
        const auto network = sim::lookup<hardware::NetworkBackend>(a.network);
        if (!network)
            throw sim::InputError("--network: " +
                                  sim::expected_one_of(sim::choices<hardware::NetworkBackend>(), a.network));
        ctx.network = *network;
    }
    std::vector<CompareResult> results;
    {
        Progress bar("compare: cases");
        results = scenarios::compare_measured(one_file(a), ctx, a.other_metrics || !a.only_case.empty(), a.only_case,
                                              [&bar](int64_t done, int64_t total) { bar(done, total); });
    }
    print_summary(results, print_table(results, false));
    if (!a.only_case.empty()) print_case_details(results);
    if (a.other_metrics) {
        std::printf("\nother_metrics entries:\n");
        const auto verrs = print_table(results, true);
        size_t vu = 0;
        for (const auto& r : results) vu += (!r.ok() && is_variant(r)) ? 1 : 0;
        std::printf("\n%zu entries simulated, %zu unsupported; median |error| %.1f%%, max |error| %.1f%%\n",
                    verrs.size(), vu, 100 * median_of(verrs),
                    100 * (verrs.empty() ? 0 : *std::max_element(verrs.begin(), verrs.end())));
    }
    if (a.only_case.empty()) {
        const plans::IntervalTable bands = scenarios::fit_intervals_of(results, one_file(a), a.other_metrics);
        print_bands(bands, scenarios::leave_one_out_intervals(results));
        if (!a.intervals.empty()) scenarios::write_intervals(a.intervals, bands);
        print_not_modelled(results);
    }
    nlohmann::json ranks;
    if (a.rank_plans) ranks = rank_published_plans(results, ctx, a);
    if (!a.json.empty() || !a.html.empty()) {
        const nlohmann::json j = compare_json(results, ranks);
        if (!a.json.empty()) write_json(a.json, j);
        write_html(a, one_file(a), nullptr, [&](report::Page& page) { report::add_compare(page, j); });
    }
    return 0;
}

}  // namespace fathom::cli
