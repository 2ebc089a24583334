#pragma once
// What `fathom search` prints and writes, for training and serving searches alike: the ranking as
// a table whose columns name candidate fields (plans/search_report.h) with a width and a format,
// where the scenario's own plan stands, why candidates were not simulated, and the CSV and JSON of
// every candidate (tools/cli/search.cpp).
#include "plans/keys.h"
#include "plans/report.h"
#include "plans/scenario.h"
#include "plans/search.h"
#include "plans/search_report.h"
#include "tools/cli/cli.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace fathom::cli {

// When a ranking column is printed.
// Varies: shown when the records' values of its field differ (a search over them).
enum class ColumnShown { Always, Priced, Capacity, Varies };

// A column of a printed ranking: a candidate record's field in `width` characters.
struct RankingColumn {
    const char* header;
    const char* field;  // the record field (null: the rank)
    int width;
    int precision = 0;        // numbers: digits after the point
    double scale = 1;         // numbers: shown as value x scale
    const char* suffix = "";  // numbers: after the value, within the width ("%", "ms", " GiB")
    bool left = false;        // text: left-aligned
    ColumnShown shown = ColumnShown::Always;
    std::string (*text)(const plans::Record&) = nullptr;  // a text made of several fields (the Pareto flags)
};

// The first `top` candidates of `ranking` as a table (a field a record lacks reads as 0).
// `priced`: the cost column; `capacity`: the capacity column.
void print_ranking(const std::vector<RankingColumn>& columns, const std::vector<plans::Record>& records,
                   const std::vector<int64_t>& ranking, int top, bool priced, bool capacity);

// The same, the columns checked against the candidate's declared fields first (a column naming a
// field no candidate has is a bug, not a column of zeros).
template <typename C>
void print_ranking(const std::vector<RankingColumn>& columns, const std::vector<plans::CandidateField<C>>& fields,
                   const std::vector<plans::Record>& records, const std::vector<int64_t>& ranking, int top, bool priced,
                   bool capacity) {
    for (const RankingColumn& col : columns)
        if (col.field &&
            std::none_of(fields.begin(), fields.end(), [&](const auto& f) { return std::string(f.name) == col.field; }))
            throw sim::InternalError(std::string("ranking column ") + col.header + " names no candidate field " +
                                     col.field);
    print_ranking(columns, records, ranking, top, priced, capacity);
}

// The Pareto column: the labels of the record's flags (boolean fields) that are set, comma-separated.
std::string pareto_flags(const plans::Record& r, const char* a, const char* a_label, const char* b,
                         const char* b_label);

// The candidates' records, in enumeration order.
template <typename C>
std::vector<plans::Record> candidate_records(const std::vector<C>& cs, const std::vector<plans::CandidateField<C>>& f,
                                             plans::Objective objective) {
    std::vector<plans::Record> out;
    for (const C& c : cs) out.push_back(plans::candidate_record(c, f, objective));
    return out;
}

// Where the scenario's own plan stands: not searched, not simulated (and why), or its rank, with
// `detail(own, best)` after it.
template <typename C, typename Same, typename Detail>
void print_own_plan(const std::vector<C>& cs, const std::vector<int64_t>& ranking, Same same, Detail detail) {
    const auto own = std::find_if(cs.begin(), cs.end(), same);
    if (own == cs.end()) {
        std::printf("\nscenario's plan is not in the searched space\n");
    } else if (own->status != plans::CandidateStatus::Evaluated) {
        std::printf("\nscenario's plan %s: %s\n", sim::name(own->status), own->reason.c_str());
    } else {
        const size_t rank =
            static_cast<size_t>(std::find(ranking.begin(), ranking.end(), own->index) - ranking.begin());
        std::printf("\nscenario's plan rank %zu of %zu (%s)\n", rank + 1, ranking.size(),
                    detail(*own, cs[static_cast<size_t>(ranking.front())]).c_str());
    }
}

// The three commonest reasons (their first lines) of the candidates `counted` selects.
template <typename C, typename Counted>
void print_reasons(const std::vector<C>& cs, const char* label, Counted counted) {
    std::map<std::string, int64_t> reasons;
    for (const C& c : cs)
        if (counted(c)) ++reasons[c.reason.substr(0, c.reason.find('\n'))];
    if (reasons.empty()) return;
    std::vector<std::pair<int64_t, std::string>> by_count;
    for (const auto& [why, n] : reasons) by_count.emplace_back(-n, why);
    std::sort(by_count.begin(), by_count.end());
    std::printf("%-16s", label);
    for (size_t k = 0; k < std::min<size_t>(3, by_count.size()); ++k)
        std::printf("%s%lld x %s\n", k ? "                " : "", static_cast<long long>(-by_count[k].first),
                    by_count[k].second.c_str());
}

// The summary keys of the --json output: the counts of a search result, its ranking and the
// candidates' records.
template <typename R>
nlohmann::json search_json(const R& r, const std::vector<plans::Record>& records) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& row : records) all.push_back(record_json(row));
    return {{"candidates_total", r.candidates.size()},
            {"evaluated", r.evaluated},
            {"pruned", r.pruned},
            {"out_of_memory", r.out_of_memory},
            {"skipped", r.skipped},
            {"truncated", r.truncated},
            {"truncation", r.truncation},
            {"ranking", r.ranking},
            {"candidates", all}};
}

// What `fathom export` needs to rebuild a candidate's plan: the scenario file and --set overrides
// the search loaded, and each candidate's plan keys that differ from the scenario's plan
// (`changed(index)`: plans::changed_training_keys or changed_serving_keys).
template <typename Changed>
void add_plan_keys(nlohmann::json& j, const plans::Scenario& s, const Args& a, Changed changed) {
    j["scenario_file"] = s.file;
    j["sets"] = a.sets;
    for (auto& c : j["candidates"]) {
        nlohmann::json keys = nlohmann::json::object();
        for (const auto& [key, value] : changed(c["index"].get<int64_t>()))
            std::visit([&keys, &key = key](const auto& v) { keys[key] = v; }, value);
        c["keys"] = keys;
    }
}

// The lines above every ranking: the candidates by status, and the time the search took.
template <typename R>
void print_counts(const R& r, const char* out_of_memory, double wall, int threads, const MpiWorld& mpi,
                  const char* rate_format) {
    const int64_t total = static_cast<int64_t>(r.candidates.size());
    std::printf("candidates      %lld%s: %lld simulated, %lld pruned by plan checks, %lld %s, %lld skipped\n",
                static_cast<long long>(total), r.truncated ? (" (" + r.truncation + ")").c_str() : "",
                static_cast<long long>(r.evaluated), static_cast<long long>(r.pruned),
                static_cast<long long>(r.out_of_memory), out_of_memory, static_cast<long long>(r.skipped));
    std::printf("time            %.2f s on %d threads%s, ", wall, threads,
                mpi.size > 1 ? (" x " + std::to_string(mpi.size) + " MPI ranks").c_str() : "");
    std::printf(rate_format, wall > 0 ? total / wall : 0.0);
    std::printf(" candidates/s\n");
}

}  // namespace fathom::cli
