#include "scenarios/scenario.h"

#include <set>

#include "plans/constraints.h"
#include "scenarios/calibration_io.h"
#include "scenarios/schema.h"
#include "sim/error.h"

namespace fathom::scenarios {
namespace {

void apply_override(YAML::Node root, const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw sim::InputError("--set expects key=value (e.g. parallel.tp=8), got '" + assignment + "'");
    const std::string path = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const auto dot = path.find('.', start);
        parts.push_back(path.substr(start, dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    std::vector<YAML::Node> chain{root};
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        YAML::Node next = chain.back()[parts[i]];
        if (!next.IsDefined() || next.IsNull()) {
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
        } else if (next.IsScalar() && parts[i] == "stack") {
            // `stack: <preset>` becomes `stack: {preset: <preset>}` so a stack key can be added.
            const std::string preset = next.Scalar();
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
            next["preset"] = preset;
        }
        if (!next.IsMap()) throw sim::InputError("--set " + path + ": '" + parts[i] + "' is not a mapping");
        chain.push_back(next);
    }
    // Lists may be given inline: --set training.layers_per_stage=[16,16,15]
    YAML::Node parsed = YAML::Load(value);
    chain.back()[parts.back()] = parsed.IsSequence() ? parsed : YAML::Node(value);
}

// Fails at a dotted key path: its line when the file has the key, else its section's (or the top's).
[[noreturn]] void fail_at(const Node& root, const std::string& path, const std::string& message) {
    const auto dot = path.find('.');
    if (dot != std::string::npos) {
        const std::string section = path.substr(0, dot);
        if (auto s = root.find(section); s && s->is_map()) s->fail(path.substr(dot + 1), message);
    }
    root.fail(path, message);
}

hardware::ClusterSpec parse_cluster(const Node& n, const plans::Catalog& cat) {
    check_section_keys(n, "cluster", {"scale_out"});
    plans::ClusterRequest r;
    read_section(n, "cluster", plans::cluster_keys(), r);
    if (auto so = n.find("scale_out")) {
        check_section_keys(*so, "cluster.scale_out");
        read_section(*so, "cluster.scale_out", plans::cluster_keys(), r);
    }
    try {
        return plans::build_cluster(r, cat);
    } catch (const sim::InputError& e) {
        n.fail("", e.bare_message());
    }
}

workloads::TrainingPlan parse_training(const Node& root, const plans::Catalog& cat, int gpus) {
    workloads::TrainingPlan p;
    std::set<std::string> given;
    // The stack preset first: its values, and its defaults for keys the scenario leaves out.
    std::optional<Node> stack = root.find("stack");
    if (stack && stack->is_scalar()) {
        const std::string id = stack->scalar();
        try {
            cat.stack(id).apply(p);
        } catch (const sim::InputError& e) {
            root.fail("stack", e.bare_message());
        }
        stack.reset();
    } else if (stack) {
        check_section_keys(*stack, "stack");
        if (stack->has("preset")) {
            try {
                cat.stack(stack->str("preset")).apply(p);
            } catch (const sim::InputError& e) {
                stack->fail("preset", e.bare_message());
            }
        }
    }
    if (auto par = root.find("parallel")) {
        check_section_keys(*par, "parallel");
        read_section(*par, "parallel", plans::training_plan_keys(), p, &given);
    }
    const Node training = root.child("training");
    check_section_keys(training, "training");
    read_section(training, "training", plans::training_plan_keys(), p, &given);
    if (stack) read_section(*stack, "stack", plans::training_plan_keys(), p, &given);

    // Derived defaults (plans/keys.h).
    auto& l = p.layout;
    if (!given.count("parallel.dp")) {
        const int model_parallel = l.tp * l.pp * l.cp;
        if (gpus % model_parallel != 0)
            fail_at(root, "parallel.tp", "tp x pp x cp = " + std::to_string(model_parallel) +
                                             " does not divide the cluster's " + std::to_string(gpus) + " GPUs");
        l.dp = gpus / model_parallel;
    }
    if (!given.count("training.schedule")) p.training.schedule = l.vp > 1 ? "interleaved-1f1b" : "1f1b";
    return p;
}

// Keys the scenario sets that no model reads yet, or whose values cannot differ in the result.
void collect_warnings(const Node& root, plans::Scenario& s) {
    auto warn = [&s](const Node& n, const std::string& key, const std::string& message) {
        const int line = n.raw()[key] ? n.raw()[key].Mark().line + 1 : n.line();
        s.warnings.push_back({n.file(), line, n.path().empty() ? key : n.path() + "." + key, message});
    };
    if (root.has("seed") && s.training())
        warn(root, "seed", "a training step is deterministic: the seed cannot change its result");
    const Node cluster = root.child("cluster");
    for (const char* key : {"pcie", "ssd"})
        if (cluster.has(key))
            warn(cluster, key, "no workload uses the host link or local SSDs yet (no offload is modelled): this key "
                               "cannot change the result");
    if (auto so = cluster.find("scale_out")) {
        if (s.cluster.nodes == 1) {
            warn(cluster, "scale_out", "a single-node cluster sends nothing over the scale-out network: these keys "
                                       "cannot change the result");
        } else if (so->has("topology") && so->str("topology") != "fat-tree-3") {
            warn(*so, "topology", "the analytical network models rail-optimized and fat-tree-2 alike (same per-GPU NIC "
                                  "bandwidth and switch hops); the choice cannot change the result");
        }
    }
}

}  // namespace

plans::Scenario parse_scenario(const Node& root, const plans::Catalog& catalog) {
    check_section_keys(root, "");
    plans::Scenario s;
    s.file = root.file();
    s.name = root.has("name") ? std::get<std::string>(read_value(root, *plans::find_key("name"))) : root.file();
    if (root.has("kind")) read_value(root, *plans::find_key("kind"));  // one kind so far: training
    if (root.has("seed")) s.seed = static_cast<uint64_t>(std::get<int64_t>(read_value(root, *plans::find_key("seed"))));
    const Node model = root.child("model");
    if (model.is_scalar()) {
        try {
            s.model = catalog.model(model.scalar());
        } catch (const sim::InputError& e) {
            root.fail("model", e.bare_message());
        }
    } else {
        s.model = parse_model(model, false);
    }
    s.cluster = parse_cluster(root.child("cluster"), catalog);
    workloads::TrainingPlan plan = parse_training(root, catalog, s.cluster.gpus());
    const auto violations = plans::check_training_plan(s.model, s.cluster, plan);
    if (!violations.empty()) fail_at(root, violations.front().key, plans::describe(violations));
    s.plan = std::move(plan);
    collect_warnings(root, s);
    return s;
}

plans::Scenario load_scenario(const std::string& path, const plans::Catalog& catalog,
                              const std::vector<std::string>& overrides) {
    Node root = load_yaml_file(path);
    for (const auto& o : overrides) apply_override(root.raw(), o);
    return parse_scenario(root, catalog);
}

plans::EvaluationContext make_context(std::shared_ptr<const plans::Catalog> catalog, uint64_t seed,
                                      const std::string& collective_algorithm) {
    plans::EvaluationContext c;
    for (const auto& [id, acc] : catalog->accelerators()) {
        if (acc.calibration_table.empty()) continue;
        auto t = std::make_shared<models::CalibrationTable>(read_calibration_table(acc.calibration_table));
        if (t->device != acc.id)
            throw sim::InputError("calibration table is for '" + t->device + "', not '" + acc.id + "'", acc.calibration_table);
        c.cost_tables.emplace(id, std::move(t));
    }
    c.catalog = std::move(catalog);
    c.seed = seed;
    c.collective_algorithm = collective_algorithm;
    return c;
}

}  // namespace fathom::scenarios
