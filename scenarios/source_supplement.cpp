#include "scenarios/source_supplement.h"

#include "scenarios/catalog.h"
#include "scenarios/measured_schema.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <set>

namespace fathom::scenarios {

namespace {

// The training fields an artifact may supply (measured-format v1 names), and how each is read.
enum class FieldType { PositiveInt, Bool, Schedule };
struct SuppliedField {
    const char* name;
    FieldType type;
};
constexpr SuppliedField kFields[] = {
    {"micro_batch_size", FieldType::PositiveInt}, {"vp", FieldType::PositiveInt},
    {"pp_schedule", FieldType::Schedule},         {"dp_comm_overlap", FieldType::Bool},
    {"tp_comm_overlap", FieldType::Bool},         {"pp_comm_overlap", FieldType::Bool},
};

SourceSupplement::Run parse_run(const Node& r) {
    r.allow_only({"model", "training", "what"});
    SourceSupplement::Run run;
    const Node m = r.child("model");
    m.allow_only({"layers", "hidden"});
    run.layers = m.integer("layers");
    run.hidden = m.integer("hidden");
    if (run.layers <= 0) m.fail("layers", "must be a positive integer");
    if (run.hidden <= 0) m.fail("hidden", "must be a positive integer");
    run.what = r.str("what");
    const Node t = r.child("training");
    if (!t.is_map() || t.keys().empty()) r.fail("training", "expected a mapping of training fields");
    std::vector<std::string> names;
    for (const auto& f : kFields) names.emplace_back(f.name);
    t.allow_only(names);
    run.training = YAML::Node(YAML::NodeType::Map);
    for (const auto& f : kFields) {
        if (!t.has(f.name)) continue;
        switch (f.type) {
            case FieldType::PositiveInt: {
                const int64_t v = t.integer(f.name);
                if (v <= 0) t.fail(f.name, "must be a positive integer");
                run.training[f.name] = v;
                break;
            }
            case FieldType::Bool: run.training[f.name] = t.boolean(f.name); break;
            case FieldType::Schedule: {
                const std::string s = t.str(f.name);
                if (!workloads::schedule_registry().find(s))
                    t.fail(f.name,
                           "unknown pipeline schedule '" + s + "'; valid: " + workloads::schedule_registry().names());
                run.training[f.name] = s;
                break;
            }
        }
    }
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
    s.table = a.str("table");
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
    const YAML::Node src = c["source"], model = c["model"], training = c["training"];
    if (!src || !src.IsMap() || !model || !model.IsMap() || !training || !training.IsMap()) return c;
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
        if (!cited || table != s.table) continue;
        for (const auto& run : s.runs) {
            if (run.layers != layers || run.hidden != hidden) continue;
            // Fields the recorder inferred rather than read (measured-format `assumed`): the
            // source's own statement outranks them.
            std::set<std::string> inferred;
            if (c["assumed"] && c["assumed"].IsSequence())
                for (const auto& a : c["assumed"])
                    if (a.IsScalar()) inferred.insert(a.Scalar());
            YAML::Node out = c;  // a handle: with_field below copies what it changes
            for (const auto& kv : run.training) {
                const std::string key = kv.first.Scalar(), path = "training." + key;
                const bool was_inferred = inferred.count(path) > 0;
                if (training[key] && text(training[key]) == text(kv.second)) continue;
                if (training[key] && !was_inferred) {
                    assumptions.push_back(path + " = " + text(training[key]) + " as the case states; " + s.id + " (" +
                                          run.what + ") has " + text(kv.second));
                    continue;
                }
                const std::string replaced =
                    training[key] ? "; the case's " + text(training[key]) + " was the recorder's assumption"
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
