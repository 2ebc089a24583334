#include "scenarios/measured.h"

#include "plans/memory_fit.h"
#include "scenarios/catalog.h"
#include "scenarios/measured_kinds.h"
#include "scenarios/measured_schema.h"
#include "scenarios/scenario.h"
#include "scenarios/source_supplement.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"
#include "sim/text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

namespace fathom::scenarios {

double relative_error(double predicted, double measured) { return (predicted - measured) / measured; }

namespace {

using namespace measured;

// One scenario of a case, run: the prediction, what the report shows beside it and the notes of the
// fill-ins that applied to this scenario.
struct Run {
    double value = 0;
    CompareResult details;
    std::vector<std::string> notes;
    int range_value = 0;
};

// The scenario parser's error about a translated value, named by the case field it came from.
[[noreturn]] void rethrow_at_origin(const sim::InputError& e, const CaseScenario& s, const Case& c) {
    const auto [path, line] = s.doc.origin(e.key(), c);
    if (path.empty()) throw CaseError(e.bare_message(), c.file(), e.line(), e.key());
    throw CaseError(e.bare_message(), c.file(), line, path);
}

plans::Scenario parse(const CaseScenario& s, const Translation& t, const Case& c, const plans::EvaluationContext& ctx) {
    const Node root(s.doc.root(), c.file(), "");
    std::vector<plans::Violation> violations;
    plans::Scenario sc;
    try {
        if (root.has("kind")) sc = parse_scenario(root, *ctx.catalog, &violations);
        else sc.cluster = parse_cluster(root.child("cluster"), *ctx.catalog);
    } catch (const CaseError&) {
        throw;
    } catch (const sim::InputError& e) {
        rethrow_at_origin(e, s, c);
    }
    if (!violations.empty()) throw Unsupported{t.cannot_run(violations)};
    return sc;
}

Run run_scenario(const Case& c, const CaseKind& kind, const Translation& t, const CaseScenario& s,
                 const plans::EvaluationContext& ctx) {
    plans::Scenario sc = parse(s, t, c, ctx);
    Run r;
    r.notes = s.notes;
    r.range_value = s.range_value;
    if (t.memory_fit) {
        auto& plan = std::get<workloads::TrainingPlan>(sc.plan);
        for (auto& n : plans::fit_memory(sc.model, sc.cluster, plan, *t.memory_fit)) r.notes.push_back(std::move(n));
    }
    // An input error met while evaluating (a plan beyond the simulator's range) is an answer about
    // this case, not an error in the file.
    try {
        std::optional<plans::Outcome> o;
        if (s.doc.has("kind")) {
            o = plans::evaluate(sc, ctx);
            if (!o->ok()) throw Unsupported{t.cannot_run(o->violations)};
        }
        r.value = kind.metric(c, Evaluated{sc, o ? &*o : nullptr, ctx}, r.details);
        r.details.accelerator = sc.cluster.accelerator.id;
    } catch (const CaseError&) {
        throw;
    } catch (const sim::InputError& e) {
        throw Unsupported{e.what()};
    }
    return r;
}

// Every scenario of the translation; for a range, the median prediction is the headline, the lowest
// and highest its range. Fills `out` from the headline run.
void predict(const Case& c, const CaseKind& kind, const Translation& t, const plans::EvaluationContext& ctx,
             CompareResult& out) {
    std::vector<Run> runs;
    std::string why;
    for (const CaseScenario& s : t.scenarios) {
        if (t.range_key.empty()) {
            runs.push_back(run_scenario(c, kind, t, s, ctx));
            continue;
        }
        try {
            runs.push_back(run_scenario(c, kind, t, s, ctx));
        } catch (const Unsupported& u) {
            why = u.reason;
        }
    }
    if (runs.empty()) throw Unsupported{t.range_what + "; no " + t.range_key + " in the plausible range fits: " + why};
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&runs](size_t a, size_t b) { return runs[a].value < runs[b].value; });
    const Run& run = runs[order[(order.size() - 1) / 2]];
    out.predicted = run.value;
    out.assumptions = t.assumptions;
    if (!t.range_key.empty()) {
        out.range_key = t.range_key;
        std::string vs;
        for (const Run& r : runs) {
            out.range_values.push_back(r.range_value);
            vs += (vs.empty() ? "" : ", ") + std::to_string(r.range_value);
        }
        out.range_low = runs[order.front()].value;
        out.range_high = runs[order.back()].value;
        out.assumptions.push_back(t.range_what + ": simulated " + t.range_key + " in {" + vs + "}; headline " +
                                  t.range_key + " = " + std::to_string(run.range_value) + " (the median prediction)");
    }
    out.assumptions.insert(out.assumptions.end(), run.notes.begin(), run.notes.end());
    const CompareResult& d = run.details;
    out.assumptions.insert(out.assumptions.end(), d.assumptions.begin(), d.assumptions.end());
    out.accelerator = d.accelerator;
    out.step_time_s = d.step_time_s;
    out.stages = d.stages;
    out.run_summary = d.run_summary;
    out.peak_memory_bytes = d.peak_memory_bytes;
    out.memory_capacity_bytes = d.memory_capacity_bytes;
    out.out_of_memory = d.out_of_memory;
    out.plan = d.plan;
    out.model = d.model;
    out.cluster = d.cluster;
    out.training_plan = d.training_plan;
    out.serving_plan = d.serving_plan;
    out.stack = t.stack;
    out.fill_ins = t.fill_ins;
}

const CaseKind* find_kind(const std::string& name) {
    for (const CaseKind* k : case_kinds())
        if (name == k->name) return k;
    return nullptr;
}

// The case's headline (or an other_metrics entry's, as its variant case) predicted by its kind.
CompareResult run_case(const Case& c, const plans::EvaluationContext& ctx) {
    const YAML::Node& raw = c.raw();
    CompareResult out;
    out.id = raw["id"].as<std::string>();
    out.kind = raw["kind"].as<std::string>();
    out.metric = raw["metric"].as<std::string>();
    out.unit = raw["unit"] ? raw["unit"].as<std::string>() : std::string();
    out.measured = c.number("value");
    if (!(out.measured > 0) || !std::isfinite(out.measured))
        c.fail("value", "the measurement must be a positive finite number");
    try {
        const CaseKind* kind = find_kind(out.kind);
        if (!kind) throw Unsupported{out.kind + " cases are not simulated yet"};
        const Translation t = kind->translate(c, ctx);
        predict(c, *kind, t, ctx, out);
        out.error = relative_error(out.predicted, out.measured);
        out.status = CompareStatus::Ok;
        out.not_modelled = not_read_fields(raw, c.reads());
    } catch (const Unsupported& u) {
        out.reason = u.reason;
    } catch (const YAML::Exception& e) {
        out.reason = "missing or malformed field: " + e.msg;
    }
    return out;
}

// measured-format section 13: with the GPU count or cp changed, dp = gpus / (tp x pp x cp) follows
// unless the variant sets it; the global batch follows dp where the source fixes the batch per rank
// (batch_per_dp_rank, or micro-batch x accumulation steps); the node count follows the GPUs.
void derive_variant_fields(YAML::Node& v, bool dp_set, bool batch_set, bool nodes_set,
                           std::vector<std::string>& derived, NodeArena& arena) {
    auto set = [&](const char* path, long long value) { v.reset(with_field(v, path, YAML::Node(value), &arena)); };
    // Read through a const handle: yaml-cpp's mutable lookup of a missing key adds it, and the case's
    // mappings are shared with the original.
    const YAML::Node& cv = v;
    const int gpus = cv["cluster"]["gpus"].as<int>();
    const int tp = cv["training"]["tp"].as<int>(), pp = cv["training"]["pp"].as<int>();
    const int cp = cv["training"]["cp"] ? cv["training"]["cp"].as<int>() : 1;
    if (!dp_set && tp * pp * cp > 0 && gpus % (tp * pp * cp) == 0) set("training.dp", gpus / (tp * pp * cp));
    const YAML::Node t = cv["training"];
    if (!batch_set && t["dp"]) {
        const long long dp = t["dp"].as<long long>();
        long long per_rank = 0;
        std::string how;
        if (t["batch_per_dp_rank"]) per_rank = t["batch_per_dp_rank"].as<long long>(), how = "batch_per_dp_rank";
        else if (t["micro_batch_size"] && t["grad_accum"])
            per_rank = t["micro_batch_size"].as<long long>() * t["grad_accum"].as<long long>(),
            how = "micro_batch_size x grad_accum";
        if (per_rank > 0 && dp * per_rank <= 2147483647LL && t["global_batch_size"].as<long long>() != dp * per_rank) {
            set("training.global_batch_size", dp * per_rank);
            derived.push_back("variant: global batch " + std::to_string(dp * per_rank) + " = dp " + std::to_string(dp) +
                              " x " + how + " " + std::to_string(per_rank));
        }
    }
    const int per_node = cv["cluster"]["gpus_per_node"].as<int>();
    if (!nodes_set && per_node > 0 && gpus % per_node == 0) set("cluster.nodes", std::max(1, gpus / per_node));
}

// The case with one other_metrics entry as its headline and the entry's variant applied; the
// fields it derives are added to `derived` as assumptions. The variant's values are the entry's own
// nodes (errors about them name their lines); the case's are shared, never written through.
YAML::Node variant_case(const YAML::Node& c, const YAML::Node& entry, std::string& described,
                        std::vector<std::string>& derived, NodeArena& arena) {
    YAML::Node v = with_field(c, "", YAML::Node(), &arena);  // the top mapping's own copy
    for (const char* q : {"metric", "value", "unit", "statistic", "scope", "flops_convention", "attention_flops",
                          "peak_tflops", "direction", "link"}) {
        v.remove(q);
        if (entry[q]) v[q] = entry[q];
    }
    bool gpus_changed = false, dp_set = false, nodes_set = false, batch_set = false;
    if (entry["variant"]) {
        for (const auto& kv : entry["variant"]) {
            // A configuration field's path (check_case_fields refused any other), nested or not.
            const std::string path = kv.first.as<std::string>();
            described += (described.empty() ? "" : ", ") + path + "=" + kv.second.as<std::string>();
            v.reset(with_field(v, path, kv.second, &arena));
            gpus_changed = gpus_changed || path == "cluster.gpus" || path == "training.cp";
            dp_set = dp_set || path == "training.dp";
            batch_set = batch_set || path == "training.global_batch_size";
            nodes_set = nodes_set || path == "cluster.nodes";
        }
    }
    if (gpus_changed && static_cast<const YAML::Node&>(v)["training"])
        derive_variant_fields(v, dp_set, batch_set, nodes_set, derived, arena);
    return v;
}

}  // namespace

plans::Record compare_record(const CompareResult& r) {
    plans::Record j;
    j.add("id", r.id);
    j.add("kind", r.kind);
    j.add("metric", r.metric);
    j.add("unit", r.unit);
    j.add("measured", r.measured);
    if (!r.variant.empty()) j.add("variant", r.variant);
    j.add("status", std::string(sim::name(r.status)));
    if (!r.ok()) {
        j.add("reason", r.reason);
        return j;
    }
    j.add("predicted", r.predicted);
    j.add("error", r.error);
    j.add("step_time_s", r.step_time_s);
    j.add("peak_memory_bytes", r.peak_memory_bytes);
    j.add("memory_capacity_bytes", r.memory_capacity_bytes);
    j.add("out_of_memory", r.out_of_memory);
    j.add("assumptions", r.assumptions);
    j.add("fill_ins", r.fill_ins);
    j.add("not_modelled", r.not_modelled);
    j.add("stack", r.stack);
    if (!r.plan.empty()) j.add("plan", r.plan);
    if (!r.range_key.empty()) {
        j.add("range.key", r.range_key);
        j.add("range.low", r.range_low);
        j.add("range.high", r.range_high);
    }
    return j;
}

namespace {

// A run of one case file entry (the case, or one of its variants): a wrong value names its line; a
// value a variant derived (no line of its own) names the entry's, with its variant.
CompareResult run_entry(const YAML::Node& c, const std::string& file, const plans::EvaluationContext& ctx,
                        const YAML::Node* entry) {
    try {
        return run_case(Case(c, file), ctx);
    } catch (const CaseError& e) {
        if (!entry || e.line() > 0) throw;
        throw sim::InputError(e.bare_message() + " (under this entry's variant)", file, entry->Mark().line + 1,
                              e.key());
    }
}

// The case and, with `other_metrics`, each of its entries, appended to `out`.
void compare_case(const Node& item, const std::string& path, const std::vector<SourceSupplement>& supplements,
                  bool other_metrics, const plans::EvaluationContext& ctx, NodeArena& arena,
                  std::vector<CompareResult>& out) {
    const YAML::Node& raw = item.raw();
    check_case_fields(raw, path);
    // What the source states outside its table (scenarios/sources/) fills the case first.
    std::vector<std::string> supplied;
    const YAML::Node c = supplement_case(raw, supplements, supplied, &arena);
    out.push_back(run_entry(c, path, ctx, nullptr));
    out.back().assumptions.insert(out.back().assumptions.begin(), supplied.begin(), supplied.end());
    if (!other_metrics || !c["other_metrics"]) return;
    int n = 0;
    const std::string case_id = out.back().id;
    for (const auto& entry : c["other_metrics"]) {
        ++n;
        std::string described;
        std::vector<std::string> derived, variant_supplied;
        // The variant's own run of the source (a variant may change the model).
        const YAML::Node v =
            supplement_case(variant_case(raw, entry, described, derived, arena), supplements, variant_supplied, &arena);
        CompareResult r = run_entry(v, path, ctx, &entry);
        r.assumptions.insert(r.assumptions.begin(), derived.begin(), derived.end());
        r.assumptions.insert(r.assumptions.begin(), variant_supplied.begin(), variant_supplied.end());
        r.id = case_id + "#" + std::to_string(n);
        r.variant = described;
        out.push_back(std::move(r));
    }
}

}  // namespace

std::vector<CompareResult> compare_measured(const std::string& path, const plans::EvaluationContext& ctx,
                                            bool include_other_metrics, const std::string& only_case,
                                            const std::function<void(int64_t, int64_t)>& progress) {
    const Node root = load_yaml_file(path);
    root.allow_only({"format_version", "cases"});
    if (root.integer("format_version") != 1) root.fail("format_version", "only format_version 1 is supported");
    std::vector<CompareResult> out;
    const auto supplements = load_source_supplements(data_dir() + "/scenarios/sources");
    const auto items = root.child("cases").items();
    if (items.empty()) root.fail("cases", "no cases: a measurement file lists at least one");
    // Case ids name results, --case and the bands' leave-one-out: each must be one case's.
    std::map<std::string, int> first_line;
    for (const auto& item : items) {
        const YAML::Node& raw = item.raw();
        if (!raw.IsMap() || !raw["id"] || !raw["id"].IsScalar()) continue;  // refused below, with the case
        if (const std::string why = sim::text_problem(raw["id"].Scalar()); !why.empty()) item.fail("id", why);
        const auto [at, fresh] = first_line.emplace(raw["id"].Scalar(), item.line());
        if (!fresh)
            item.fail("id", "duplicate case id '" + at->first + "' (first at line " + std::to_string(at->second) + ")");
    }
    NodeArena arena(root.raw());
    int64_t done = 0;
    for (const auto& item : items) {
        if (progress) progress(done, static_cast<int64_t>(items.size()));
        ++done;
        const YAML::Node& raw = item.raw();
        if (!raw.IsMap() || !raw["id"] || !raw["kind"] || !raw["metric"] || !raw["value"])
            item.fail("", "a case needs id, kind, metric and value");
        if (!only_case.empty() && (!raw["id"].IsScalar() || raw["id"].Scalar() != only_case)) continue;
        // A value of the wrong shape deep in a case (a mapping where a number goes) surfaces as
        // yaml-cpp's conversion error: an input error at the value's line (a fuzzer found these
        // ending as internal errors).
        try {
            compare_case(item, path, supplements, include_other_metrics, ctx, arena, out);
        } catch (const YAML::Exception& e) {
            throw sim::InputError("a value of the wrong type (" + e.msg + ")", path, e.mark.line + 1);
        }
    }
    if (!only_case.empty() && out.empty()) throw sim::InputError("no case with id '" + only_case + "'", path);
    return out;
}

}  // namespace fathom::scenarios
