#include "scenarios/source_supplement.h"

#include "scenarios/catalog.h"
#include "scenarios/measured_schema.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>
#include <set>

namespace fathom::scenarios {

namespace {

// The fields an artifact may supply, per section (measured-format v1 names, and the serving fields
// of fathom's extension, scenarios/measured-format-fathom.md), and how each is read.
enum class FieldType { PositiveInt, Bool, Schedule, Choice };
struct SuppliedField {
    const char* name;
    FieldType type;
    std::vector<std::string> choices = {};  // FieldType::Choice
};
const std::vector<SuppliedField>& supplied_fields(const std::string& section) {
    static const std::vector<SuppliedField> training = {
        {"micro_batch_size", FieldType::PositiveInt}, {"vp", FieldType::PositiveInt},
        {"pp_schedule", FieldType::Schedule},         {"dp_comm_overlap", FieldType::Bool},
        {"tp_comm_overlap", FieldType::Bool},         {"pp_comm_overlap", FieldType::Bool},
    };
    static const std::vector<SuppliedField> serving = {
        {"moe_dispatcher", FieldType::Choice, serving_extension_choices("moe_dispatcher")},
        {"two_batch_overlap", FieldType::Bool},
        {"packaging", FieldType::Choice, serving_extension_choices("packaging")},
    };
    return section == "training" ? training : serving;
}

YAML::Node parse_field(const Node& t, const SuppliedField& f) {
    switch (f.type) {
        case FieldType::PositiveInt: {
            const int64_t v = t.integer(f.name);
            if (v <= 0) t.fail(f.name, "must be a positive integer");
            return YAML::Node(v);
        }
        case FieldType::Bool: return YAML::Node(t.boolean(f.name));
        case FieldType::Schedule: {
            const std::string s = t.str(f.name);
            if (!workloads::schedule_registry().find(s))
                t.fail(f.name,
                       "unknown pipeline schedule '" + s + "'; valid: " + workloads::schedule_registry().names());
            return YAML::Node(s);
        }
        case FieldType::Choice: {
            const std::string s = t.str(f.name);
            if (std::find(f.choices.begin(), f.choices.end(), s) == f.choices.end()) {
                std::string valid;
                for (const auto& c : f.choices) valid += (valid.empty() ? "" : ", ") + c;
                t.fail(f.name, "unknown value '" + s + "'; valid: " + valid);
            }
            return YAML::Node(s);
        }
    }
    return {};
}

SourceSupplement::Run parse_run(const Node& r) {
    r.allow_only({"model", "training", "serving", "what"});
    SourceSupplement::Run run;
    const Node m = r.child("model");
    m.allow_only({"layers", "hidden"});
    run.layers = m.integer("layers");
    run.hidden = m.integer("hidden");
    if (run.layers <= 0) m.fail("layers", "must be a positive integer");
    if (run.hidden <= 0) m.fail("hidden", "must be a positive integer");
    run.what = r.str("what");
    if (r.has("training") == r.has("serving")) r.fail("", "a run supplies either training or serving fields");
    run.section = r.has("training") ? "training" : "serving";
    const Node t = r.child(run.section);
    if (!t.is_map() || t.keys().empty()) r.fail(run.section, "expected a mapping of " + run.section + " fields");
    std::vector<std::string> names;
    for (const auto& f : supplied_fields(run.section)) names.emplace_back(f.name);
    t.allow_only(names);
    run.fields = YAML::Node(YAML::NodeType::Map);
    for (const auto& f : supplied_fields(run.section))
        if (t.has(f.name)) run.fields[f.name] = parse_field(t, f);
    return run;
}

SourceSupplement parse_supplement(const Node& n, const std::string& file) {
    n.allow_only({"kind", "id", "name", "source", "applies_to", "runs"});
    check_header(n, "source-supplement", file);
    SourceSupplement s;
    s.file = file;
    s.id = n.str("id");
    if (n.has("name")) s.name = n.str("name");
    s.source = n.str("source");
    if (s.source.empty()) n.fail("source", "the artifact quoted must be named");
    const Node a = n.child("applies_to");
    a.allow_only({"cites", "table"});
    s.cites = a.str("cites");
    if (a.has("table")) s.table = a.str("table");
    if (s.cites.empty()) a.fail("cites", "must not be empty");
    for (const Node& r : n.child("runs").items()) {
        SourceSupplement::Run run = parse_run(r);
        for (const auto& other : s.runs)
            if (other.layers == run.layers && other.hidden == run.hidden)
                r.fail("model", "a second run of the same model (" + std::to_string(run.layers) + " layers, hidden " +
                                    std::to_string(run.hidden) + ")");
        s.runs.push_back(std::move(run));
    }
    if (s.runs.empty()) n.fail("runs", "expected at least one run");
    return s;
}

std::string text(const YAML::Node& v) { return v.IsScalar() ? v.Scalar() : std::string("(not a value)"); }

}  // namespace

std::vector<SourceSupplement> load_source_supplements(const std::string& dir) {
    std::vector<SourceSupplement> out;
    for (const auto& f : yaml_files(dir)) out.push_back(parse_supplement(load_yaml_file(f), f));
    return out;
}

YAML::Node supplement_case(const YAML::Node& c, const std::vector<SourceSupplement>& supplements,
                           std::vector<std::string>& assumptions, NodeArena* arena) {
    const YAML::Node src = c["source"], model = c["model"];
    if (!src || !src.IsMap() || !model || !model.IsMap()) return c;
    auto field = [](const YAML::Node& n, const char* k) {
        return n[k] && n[k].IsScalar() ? n[k].Scalar() : std::string();
    };
    const std::string title = field(src, "title"), url = field(src, "url"), table = field(src, "table");
    if (!model["layers"] || !model["hidden"] || !model["layers"].IsScalar() || !model["hidden"].IsScalar()) return c;
    long long layers = 0, hidden = 0;
    try {
        layers = model["layers"].as<long long>();
        hidden = model["hidden"].as<long long>();
    } catch (const YAML::Exception&) {
        return c;  // the case's own reader reports the malformed value
    }
    for (const auto& s : supplements) {
        const bool cited = title.find(s.cites) != std::string::npos || url.find(s.cites) != std::string::npos;
        if (!cited || (!s.table.empty() && table != s.table)) continue;
        for (const auto& run : s.runs) {
            if (run.layers != layers || run.hidden != hidden) continue;
            const YAML::Node section = c[run.section];
            if (!section || !section.IsMap()) continue;
            // Fields the recorder inferred rather than read (measured-format `assumed`): the
            // source's own statement outranks them.
            std::set<std::string> inferred;
            if (c["assumed"] && c["assumed"].IsSequence())
                for (const auto& a : c["assumed"])
                    if (a.IsScalar()) inferred.insert(a.Scalar());
            YAML::Node out = c;  // a handle: with_field below copies what it changes
            for (const auto& kv : run.fields) {
                const std::string key = kv.first.Scalar(), path = run.section + "." + key;
                const bool was_inferred = inferred.count(path) > 0;
                if (section[key] && text(section[key]) == text(kv.second)) continue;
                if (section[key] && !was_inferred) {
                    assumptions.push_back(path + " = " + text(section[key]) + " as the case states; " + s.id + " (" +
                                          run.what + ") has " + text(kv.second));
                    continue;
                }
                const std::string replaced =
                    section[key] ? "; the case's " + text(section[key]) + " was the recorder's assumption"
                                 : std::string();
                out.reset(with_field(out, path, kv.second, arena));
                assumptions.push_back(path + " = " + text(kv.second) + " (" + s.id + ": " + run.what + replaced + ")");
            }
            return out;
        }
    }
    return c;
}

}  // namespace fathom::scenarios
