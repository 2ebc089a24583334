#include "scenarios/scenario.h"

#include "plans/constraints.h"
#include "plans/rl_evaluate.h"
#include "plans/search_keys.h"
#include "plans/search_objective.h"
#include "scenarios/calibration_io.h"
#include "scenarios/overrides.h"
#include "scenarios/rl_section.h"
#include "scenarios/run_section.h"
#include "scenarios/scenario_sections.h"
#include "scenarios/schema.h"
#include "scenarios/serving_warnings.h"
#include "scenarios/traffic_section.h"
#include "sim/error.h"
#include "sim/input_file.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

namespace fathom::scenarios {

void fail_at(const Node& root, const std::string& path, const std::string& message) {
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

workloads::TrainingPlan parse_training(const Node& root, const plans::Catalog& cat, int64_t gpus,
                                       const std::set<std::string>& derived) {
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
    read_section(training, "training", plans::training_plan_keys(), p, &given, &derived);
    if (auto docs = training.find("documents")) {
        // Packed documents: a fixed length, or a mapping of the length-distribution keys.
        if (docs->is_scalar()) {
            p.training.documents.kind = workloads::LengthKind::Fixed;
            p.training.documents.value = training.integer("documents");
            if (p.training.documents.value < 1) training.fail("documents", "must be >= 1 token");
        } else {
            check_section_keys(*docs, "training.documents");
            read_section(*docs, "training.documents", plans::training_plan_keys(), p, &given);
            if (auto why = p.training.documents.check(); !why.empty()) docs->fail("", why);
            if (!p.training.packed()) docs->fail("value", "a fixed document length needs its value");
        }
    }
    if (stack) read_section(*stack, "stack", plans::training_plan_keys(), p, &given);

    // Derived defaults (plans/keys.h).
    auto& l = p.layout;
    if (!given.count("parallel.dp")) {
        // In 64 bits: each degree fits an int, their product need not (it wrapped to 0 and the
        // division below died with SIGFPE).
        const int64_t model_parallel = int64_t{l.tp} * l.pp * l.cp;
        if (gpus % model_parallel != 0)
            fail_at(root, "parallel.tp",
                    "tp x pp x cp = " + std::to_string(model_parallel) + " does not divide the cluster's " +
                        std::to_string(gpus) + " GPUs");
        l.dp = static_cast<int>(gpus / model_parallel);
    }
    if (!given.count("training.schedule")) p.training.schedule = workloads::default_schedule(l);
    return p;
}

using workloads::serving::ServingPlan;
using KeySet = std::set<std::string>;

// The `serving` section: the engine preset first (its values are defaults the scenario's own keys
// override), then the section's keys and the disaggregated pools.
void read_serving_section(const Node& root, const plans::Catalog& cat, ServingPlan& p, KeySet& given) {
    const auto& keys = plans::serving_plan_keys();
    const Node sv = root.child("serving");
    check_section_keys(sv, "serving", {"disaggregation", "speculative", "lora", "autoscale"});
    if (sv.has("engine")) {
        const std::string id = std::get<std::string>(read_value(sv, *plans::find_key("serving.engine")));
        try {
            cat.engine(id).apply(p);
        } catch (const sim::InputError& e) {
            sv.fail("engine", e.bare_message());
        }
    }
    read_section(sv, "serving", keys, p, &given);
    for (const std::string sub : {"speculative", "lora", "autoscale"})
        if (auto n = sv.find(sub)) {
            check_section_keys(*n, "serving." + sub);
            read_section(*n, "serving." + sub, keys, p, &given);
        }
    if (auto d = sv.find("disaggregation")) {
        check_section_keys(*d, "serving.disaggregation", {"prefill", "decode"});
        read_section(*d, "serving.disaggregation", keys, p, &given);
        for (const char* pool : {"prefill", "decode"}) {
            const Node n = d->child(pool);
            const std::string prefix = std::string("serving.disaggregation.") + pool;
            check_section_keys(n, prefix);
            (pool[0] == 'p' ? p.prefill : p.decode).emplace();
            read_section(n, prefix, keys, p, &given);
        }
        for (const char* k : {"tp", "pp", "replicas"})
            if (sv.has(k)) sv.fail(k, "with serving.disaggregation the layout lives in its prefill and decode pools");
    }
}

// The serving plan's derived defaults on `cluster` (replicas filling it, the pools' accelerators,
// the engine's small-device values, the KV dtype) and the catalog ids it names.
void finish_serving(const Node& root, const plans::Catalog& cat, const hardware::ClusterSpec& cluster, ServingPlan& p,
                    const KeySet& given) {
    using workloads::serving::PoolLayout;
    // Derived defaults and the pools' accelerators.
    if (!p.disaggregated() && !given.count("serving.replicas")) {
        const int64_t per = int64_t{p.replica.tp} * p.replica.pp;  // 64 bits: see parse_training
        if (cluster.gpus() % per != 0)
            fail_at(root, "serving.tp",
                    "tp x pp = " + std::to_string(per) + " does not divide the cluster's " +
                        std::to_string(cluster.gpus()) + " GPUs; give serving.replicas");
        p.replica.replicas = static_cast<int>(cluster.gpus() / per);
    }
    // The catalog ids the plan names, each refused at its key.
    auto lookup = [&](const std::string& key, const std::function<void()>& set) {
        try {
            set();
        } catch (const sim::InputError& e) {
            fail_at(root, key, e.bare_message());
        }
    };
    auto resolve = [&](PoolLayout& pool, const std::string& key) {
        pool.accelerator = cluster.accelerator;
        if (!pool.accelerator_id.empty()) lookup(key, [&] { pool.accelerator = cat.accelerator(pool.accelerator_id); });
    };
    if (p.disaggregated()) {
        resolve(*p.prefill, "serving.disaggregation.prefill.accelerator");
        resolve(*p.decode, "serving.disaggregation.decode.accelerator");
    } else {
        resolve(p.replica, "serving.accelerator");
    }
    // The engine's defaults for a smaller GPU (vLLM's token budget under 70 GiB), where the scenario
    // does not set those keys itself.
    if (!p.engine.preset.empty()) {
        const plans::StackPreset& preset = cat.engine(p.engine.preset);
        const bool small = p.disaggregated()
                               ? preset.is_small(p.prefill->accelerator) || preset.is_small(p.decode->accelerator)
                               : preset.is_small(p.replica.accelerator);
        if (small) preset.apply_small_device(p, given);
    }
    if (!given.count("serving.kv_dtype")) p.kernels.kv_dtype = p.kv.dtype;
    auto& sp = p.speculative;
    if (!sp.draft_model.empty())
        lookup("serving.speculative.draft_model",
               [&] { sp.draft = std::make_shared<models::ModelSpec>(cat.model(sp.draft_model)); });
    if (!sp.acceptance_profile.empty())
        lookup("serving.speculative.acceptance_profile",
               [&] { sp.positions = cat.acceptance_profile(sp.acceptance_profile).positions; });
}

namespace {

// The `slo` section, with its classes: {NAME: {ttft: T, tpot: T}, ...} (a missing ttft or tpot:
// not constrained), and the `capacity` section.
void read_slo_and_capacity(const Node& root, ServingPlan& p, KeySet& given) {
    const auto& keys = plans::serving_plan_keys();
    if (auto slo = root.find("slo")) {
        check_section_keys(*slo, "slo", {"classes"});
        read_section(*slo, "slo", keys, p, &given);
        if (auto classes = slo->find("classes")) {
            if (!classes->is_map()) slo->fail("classes", "expected a mapping of class names to {ttft, tpot}");
            for (const std::string& name : classes->keys()) {
                const Node c = classes->child(name);
                if (!c.is_map()) classes->fail(name, "expected a mapping with ttft and/or tpot");
                c.allow_only({"ttft", "tpot"});
                workloads::serving::SloClass k;
                k.name = name;
                if (c.has("ttft")) k.ttft_s = std::get<double>(read_value(c, *plans::find_key("slo.ttft")));
                if (c.has("tpot")) k.tpot_s = std::get<double>(read_value(c, *plans::find_key("slo.tpot")));
                p.slo.classes.push_back(std::move(k));
            }
        }
    }
    if (auto cap = root.find("capacity")) {
        check_section_keys(*cap, "capacity");
        read_section(*cap, "capacity", keys, p, &given);
    }
}

// The `serving`, `traffic`, `slo` and `capacity` sections. The engine preset first (its values are
// defaults the scenario's own keys override).
workloads::serving::ServingPlan parse_serving(const Node& root, const plans::Catalog& cat,
                                              const hardware::ClusterSpec& cluster) {
    ServingPlan p;
    KeySet given;
    read_serving_section(root, cat, p, given);
    read_traffic(root, cat, p, given);
    read_slo_and_capacity(root, p, given);
    finish_serving(root, cat, cluster, p, given);
    return p;
}

// Keys the scenario sets that no model reads yet, or whose values cannot differ in the result.
void collect_warnings(const Node& root, plans::Scenario& s, const plans::Catalog& catalog) {
    auto warn = [&s](const Node& n, const std::string& key, const std::string& message) {
        const int line = n.raw()[key] ? n.raw()[key].Mark().line + 1 : n.line();
        s.warnings.push_back({n.file(), line, n.path().empty() ? key : n.path() + "." + key, message});
    };
    if (root.has("seed") && s.training())
        warn(root, "seed", "a training step is deterministic: the seed cannot change its result");
    const Node cluster = root.child("cluster");
    // A whole run checkpoints over the host links to the SSDs or the file system; an adaptive search
    // reshards through the SSDs; activation offload uses the SSDs and the host links. Serving loads
    // over the host link; KV offloading and cold starts read the SSDs, cold starts the file system.
    const bool adaptive = s.search && s.search->phases > 1;
    const bool offload = s.training() && s.training()->stack.activation_offload != workloads::ActivationOffload::None;
    const auto* srv = s.serving();
    const bool ssd =
        adaptive || offload || (srv && (srv->kv.offload_ssd_bytes > 0 || srv->autoscale.weights_from == "ssd"));
    for (const std::string key : {"pcie", "ssd", "ssds_per_node", "storage", "host_memory"})
        if (cluster.has(key) && !s.run && !(ssd && (key == "ssd" || key == "ssds_per_node")) &&
            !((offload || srv) && key == "pcie") &&
            !(srv && key == "storage" && srv->autoscale.weights_from == "storage"))
            warn(cluster, key,
                 "a training step does not use the host link or the storage tiers (no offload is modelled; a "
                 "`run` section's checkpoints do): this key cannot change the result");
    if (!s.run && s.search && s.search->has_run_axes())
        warn(root, "search",
             "search.checkpoint_interval, checkpoint_method, spare_nodes and recovery are tried on whole runs: "
             "without a `run` section they cannot change the result");
    if (s.serving()) serving_warnings(root.child("serving"), *s.serving(), warn);
    if (s.run && s.run->failures != "none") {
        const hardware::FailureRatesSpec& rates = catalog.failure_rates(s.run->failures);
        if (rates.accelerator != s.cluster.accelerator.id)
            warn(root.child("run"), "failures",
                 "the profile's rates were measured on " + rates.accelerator + ", not " + s.cluster.accelerator.id +
                     ": an estimate for this device");
    }
    if (auto so = cluster.find("scale_out")) {
        if (s.cluster.nodes == 1) {
            warn(cluster, "scale_out",
                 "a single-node cluster sends nothing over the scale-out network: these keys "
                 "cannot change the result");
        } else if (s.cluster.network == hardware::NetworkBackend::Analytical) {
            using hardware::ScaleOutTopology;
            const ScaleOutTopology topology = s.cluster.topology;
            if (so->has("topology") && topology != ScaleOutTopology::FatTree3 &&
                topology != ScaleOutTopology::Dragonfly)
                warn(*so, "topology",
                     "the analytical network models rail-optimized and fat-tree-2 alike (same per-GPU "
                     "NIC bandwidth and switch hops); the choice cannot change the result (cluster.network: "
                     "simgrid routes flows on the graph)");
            if (so->has("routing"))
                warn(*so, "routing", "the analytical network has no routes: only cluster.network: simgrid uses it");
            if (so->has("topology") && topology == ScaleOutTopology::Dragonfly)
                warn(*so, "topology",
                     "the analytical network prices a dragonfly as a fat-tree-3 (a group as a pod); the "
                     "limits of its global links show only with cluster.network: simgrid");
        }
    }
}

}  // namespace

namespace {

// The `search` section: the keys that serve this kind of scenario by their declaration
// (plans/search_keys.h; a training axis in a serving scenario, or the reverse, is an error naming
// it), device types that the catalog has, an objective that ranks this kind's plans.
plans::SearchSpace parse_search(const Node& search, plans::WorkloadKind kind, const plans::Catalog& catalog) {
    check_section_keys(search, "search");
    plans::SearchSpace space;
    for (const plans::SearchKey& key : plans::search_keys()) {
        const std::string name = key.info.name();
        if (!search.has(name)) continue;
        if (!key.serves(kind))
            search.fail(name, std::string(key.is_axis() ? "this axis searches " : "this key serves ") + key.kinds() +
                                  " plans (this scenario is kind: " + sim::name(kind) + ")");
        try {
            plans::set_search_key(space, key.info.path, read_value(search, key.info));
        } catch (const sim::InputError& e) {
            if (e.line() > 0 || e.key().empty()) throw;
            search.fail(name, e.bare_message());
        }
    }
    if (const auto* ids = space.given("search.accelerator"))
        for (const auto& id : *ids)
            if (!catalog.accelerators().count(std::get<std::string>(id)))
                search.fail("accelerator",
                            "unknown accelerator '" + std::get<std::string>(id) + "' (see `fathom list accelerators`)");
    for (const auto& [id, usd] : space.prices)
        if (!catalog.accelerators().count(id))
            search.fail("prices", "unknown accelerator '" + id + "' (see `fathom list accelerators`)");
    if (const std::string why = plans::objective_refusal(space.objective, kind); !why.empty())
        search.fail("objective", why);
    return space;
}

}  // namespace

plans::Scenario parse_scenario(const Node& root, const plans::Catalog& catalog) {
    return parse_scenario(root, catalog, nullptr);
}

plans::Scenario parse_scenario(const Node& root, const plans::Catalog& catalog,
                               std::vector<plans::Violation>* violations_out) {
    check_section_keys(root, "");
    plans::Scenario s;
    s.file = root.file();
    s.name = root.has("name") ? std::get<std::string>(read_value(root, *plans::find_key("name"))) : root.file();
    using plans::WorkloadKind;
    const WorkloadKind kind =
        root.has("kind") ? sim::parse<WorkloadKind>(std::get<std::string>(read_value(root, *plans::find_key("kind"))))
                         : WorkloadKind::Training;
    // The sections of the kinds, each with the kinds it belongs to (an RL scenario's trainer and
    // rollout engine are a training plan's and a serving plan's sections).
    static const std::vector<std::pair<const char*, std::vector<WorkloadKind>>> sections = {
        {"parallel", {WorkloadKind::Training, WorkloadKind::Rl}},
        {"training", {WorkloadKind::Training, WorkloadKind::Rl}},
        {"stack", {WorkloadKind::Training, WorkloadKind::Rl}},
        {"run", {WorkloadKind::Training}},
        {"serving", {WorkloadKind::Serving, WorkloadKind::Rl}},
        {"traffic", {WorkloadKind::Serving}},
        {"slo", {WorkloadKind::Serving}},
        {"capacity", {WorkloadKind::Serving}},
        {"rl", {WorkloadKind::Rl}},
        {"search", {WorkloadKind::Training, WorkloadKind::Serving, WorkloadKind::Rl}}};
    for (const auto& [key, kinds] : sections) {
        if (!root.has(key) || std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) continue;
        std::string owners;
        for (WorkloadKind k : kinds) owners += std::string(owners.empty() ? "" : " and ") + sim::name(k);
        root.fail(key, std::string("key '") + key + "' belongs to " + owners +
                           " scenarios (this one is kind: " + sim::name(kind) + ")");
    }
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
    // A serving or RL plan: its violations (refused here, or handed to the caller), its search
    // section, the warnings.
    auto finish = [&](auto plan, const std::vector<plans::Violation>& violations) {
        if (violations_out) *violations_out = violations;
        else if (!violations.empty()) fail_at(root, violations.front().key, plans::describe(violations));
        s.plan = std::move(plan);
        if (auto search = root.find("search")) s.search = parse_search(*search, kind, catalog);
        collect_warnings(root, s, catalog);
        return s;
    };
    if (kind == WorkloadKind::Serving) {
        workloads::serving::ServingPlan plan = parse_serving(root, catalog, s.cluster);
        const auto violations = plans::check_serving_plan(s.model, s.cluster, plan);
        return finish(std::move(plan), violations);
    }
    if (kind == WorkloadKind::Rl) {
        workloads::rl::RlPlan plan = parse_rl(root, catalog, s.cluster);
        const auto violations = plans::check_rl_plan(s.model, s.cluster, plan);
        return finish(std::move(plan), violations);
    }
    workloads::TrainingPlan plan = parse_training(root, catalog, s.cluster.gpus());
    const auto violations = plans::check_training_plan(s.model, s.cluster, plan);
    if (violations_out) *violations_out = violations;
    else if (!violations.empty()) fail_at(root, violations.front().key, plans::describe(violations));
    if (auto search = root.find("search")) s.search = parse_search(*search, kind, catalog);
    if (root.has("run")) s.run = parse_run(root, catalog, s.model, s.cluster, plan, s.search ? &*s.search : nullptr);
    s.plan = std::move(plan);
    collect_warnings(root, s, catalog);
    return s;
}

plans::Scenario load_scenario(const std::string& path, const plans::Catalog& catalog,
                              const std::vector<std::string>& overrides) {
    Node root = load_yaml_file(path);
    apply_overrides(root, overrides);
    return parse_scenario(root, catalog);
}

plans::Scenario load_scenario_text(const std::string& yaml, const std::string& name, const plans::Catalog& catalog,
                                   const std::vector<std::string>& overrides) {
    Node root = load_yaml_string(yaml, name);
    apply_overrides(root, overrides);
    return parse_scenario(root, catalog);
}

plans::EvaluationContext make_context(std::shared_ptr<const plans::Catalog> catalog, uint64_t seed,
                                      const std::string& collective_algorithm) {
    plans::EvaluationContext c;
    for (const auto& [id, acc] : catalog->accelerators()) {
        if (acc.calibration_table.empty()) continue;
        auto t = std::make_shared<models::CalibrationTable>(read_calibration_table(acc.calibration_table));
        if (t->device != acc.id)
            throw sim::InputError("calibration table is for '" + t->device + "', not '" + acc.id + "'",
                                  acc.calibration_table);
        const std::string missing = models::missing_op_classes(*t);
        if (!missing.empty())
            throw sim::InputError("calibration table of '" + acc.id + "' has no " + missing +
                                      " group: a table an accelerator names must price every op class (measure them "
                                      "with tools/calibrate/campaign.sh, or leave calibration_table out)",
                                  acc.calibration_table);
        c.cost_tables.emplace(id, std::move(t));
    }
    c.catalog = std::move(catalog);
    c.seed = seed;
    c.collective_algorithm = collective_algorithm;
    return c;
}

}  // namespace fathom::scenarios
