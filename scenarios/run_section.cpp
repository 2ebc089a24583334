#include "scenarios/run_section.h"

#include "plans/run.h"
#include "plans/run_elastic.h"
#include "scenarios/schema.h"

#include <algorithm>

namespace fathom::scenarios {

plans::RunRequest parse_run(const Node& root, const plans::Catalog& catalog, const models::ModelSpec& model,
                            const hardware::ClusterSpec& cluster, const workloads::TrainingPlan& plan,
                            const plans::SearchSpace* search) {
    const Node run = root.child("run");
    check_section_keys(run, "run");
    plans::RunRequest r;
    read_section(run, "run", plans::run_keys(), r);
    if (r.failures != "none" && !catalog.failure_rates().count(r.failures)) {
        std::string known;
        for (const auto& [id, x] : catalog.failure_rates()) known += ", " + id;
        run.fail("failures", "unknown failure-rate profile '" + r.failures + "' (known: none" + known + ")");
    }
    if (!r.writer.empty()) {
        const auto& writers = catalog.checkpoint_writers();
        if (!writers.count(r.writer)) {
            std::string known;
            for (const auto& [id, x] : writers) known += (known.empty() ? "" : ", ") + id;
            run.fail("checkpoint_writer", "unknown checkpoint writer '" + r.writer + "' (known: " + known + ")");
        }
        r.writer_rank_rate = writers.at(r.writer).rank_rate;
    }
    if (run.has("checkpoint_every") && run.has("checkpoint_interval"))
        run.fail("checkpoint_every",
                 "give the checkpoint interval as one of run.checkpoint_interval (time) and run.checkpoint_every "
                 "(steps)");
    if (run.has("spare_nodes") != run.has("repair"))
        run.fail(run.has("spare_nodes") ? "spare_nodes" : "repair",
                 "run.spare_nodes and run.repair go together (how many spares, and how long a failed node is away)");
    const int straggler_keys =
        run.has("stragglers_per_node_day") + run.has("straggler_slowdown") + run.has("straggler_detect");
    if (straggler_keys != 0 && straggler_keys != 3)
        run.fail(run.has("stragglers_per_node_day") ? "stragglers_per_node_day" : "straggler_slowdown",
                 "run.stragglers_per_node_day, run.straggler_slowdown and run.straggler_detect go together (how "
                 "often, how slow, how long until eviction)");
    // The pause is the elastic recovery's, which the run or its search (search.recovery) tries.
    const bool searched = search && std::find(search->recoveries.begin(), search->recoveries.end(), "elastic") !=
                                        search->recoveries.end();
    const bool elastic = r.recovery == plans::Recovery::Elastic;
    if (elastic ? !run.has("reconfigure") : run.has("reconfigure") && !searched)
        run.fail(elastic ? "recovery" : "reconfigure",
                 "run.recovery elastic and run.reconfigure go together (the job's pause as replicas leave or "
                 "rejoin)");
    std::vector<plans::Violation> violations;
    plans::target_steps(r, plan, 0.0, violations);
    const std::vector<plans::Violation> ev = plans::elastic_violations(cluster, plan, r);
    violations.insert(violations.end(), ev.begin(), ev.end());
    const plans::CheckpointPlan k = plans::plan_checkpoint(model, cluster, plan, r);
    violations.insert(violations.end(), k.violations.begin(), k.violations.end());
    if (violations.empty()) return r;
    // The first violation at its key's line (its section's where the file leaves the key out): run.*
    // in this section, cluster.* in the cluster's.
    const plans::Violation& v = violations.front();
    const auto dot = v.key.find('.');
    root.child(v.key.substr(0, dot)).fail(v.key.substr(dot + 1), v.message);
}

}  // namespace fathom::scenarios
