#pragma once
// Outcomes as flat records, ready to become DataFrame rows or JSON objects: a summary record (one
// row per evaluated scenario) and named tables of records (one row per pipeline stage, ...). Field
// names are the `fathom run --json` keys documented in the README; a dotted name ("memory_bytes.total")
// is one column, which JSON writers nest.
#include "plans/evaluate.h"
#include "plans/intervals.h"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace fathom::plans {

// How one op class was priced, as a report says it: "roofline" (no table, or all its ops outside
// the table's measured range), "table", "table and roofline" (some of its ops outside), or, serving
// pools on several devices, "table on some pools, roofline on others".
std::string op_class_pricing(CostModelKind kind, bool some_inside, bool some_outside);

using FieldValue = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;

struct Record {
    std::vector<std::pair<std::string, FieldValue>> fields;

    void add(std::string name, FieldValue v) { fields.emplace_back(std::move(name), std::move(v)); }
    const FieldValue* find(const std::string& name) const;
};

struct Report {
    Record summary;
    std::vector<std::pair<std::string, std::vector<Record>>> tables;
};

// The column of a stage's communication stream of group kind `g`: "<kind>_comm_s" (tp_comm_s, ...).
std::string comm_column(models::GroupKind g);
// A stage's communication columns: those of the kinds fathom has always reported (tp, cp, pp, dp,
// ep; 0 where the step had no such traffic), then that of every other kind in `kinds`.
void add_comm_columns(Record& x, const workloads::StageReport& st, const std::vector<models::GroupKind>& kinds);
// The group kinds any of `stages` spent time communicating over, in GroupKind order.
std::vector<models::GroupKind> comm_kinds_of(const std::vector<workloads::StageReport>& stages);

// Stable across runs and platforms: every serving key's value (the plan_hash of a serving
// scenario); an RL plan's: its rollout engine's, its trainer's and every rl key's.
uint64_t serving_hash(const workloads::serving::ServingPlan& plan);
uint64_t rl_hash(const workloads::rl::RlPlan& plan);
// An RL outcome's metrics (plans/rl_report.cpp): the summary's iteration time, throughput,
// breakdown, use, staleness, the first rollout's and update's headline figures, and the
// `iterations` table.
void add_rl(Report& rep, const Outcome& outcome, const workloads::rl::RlReport& r);

// The scenario's identity (scenario, kind, model, accelerator, gpus, stack, plan_hash) followed by
// the workload's metrics, or by `violations` when the plan cannot run. With validation bands
// (plans/intervals.h), the headline metrics' 90% intervals: interval_90.<metric>.{low, high} and
// interval_90.notes (the regime, its cases, any widening).
Report make_report(const Scenario& scenario, const Outcome& outcome, const IntervalTable* bands = nullptr);

// The headline metrics of an outcome (its run --json key and value) with their 90% intervals from
// `bands` on the scenario's accelerator and plan features; a metric without a band is left out.
struct BandedMetric {
    std::string key;
    double value = 0;
    Interval interval;
};
std::vector<BandedMetric> headline_intervals(const Scenario& scenario, const Outcome& outcome,
                                             const IntervalTable& bands);

}  // namespace fathom::plans
