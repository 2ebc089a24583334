#include "plans/report.h"

#include <cstdio>

namespace fathom::plans {
namespace {

void add_training(Report& rep, const Outcome& o, const workloads::StepReport& r) {
    Record& s = rep.summary;
    s.add("step_time_s", r.step_time_s);
    s.add("tokens_per_s_per_gpu", r.tokens_per_s_per_gpu);
    s.add("mfu", r.mfu);
    s.add("model_tflops_per_gpu", r.model_tflops_per_gpu);
    s.add("bubble_fraction", r.bubble_fraction);
    s.add("exposed_comm_s", r.exposed_comm_s);
    s.add("peak_memory_bytes", r.peak_memory_bytes);
    s.add("memory_capacity_bytes", r.memory_capacity_bytes);
    s.add("out_of_memory", r.out_of_memory);
    s.add("events", static_cast<int64_t>(r.events));
    s.add("tasks", static_cast<int64_t>(r.tasks));
    s.add("cost_model", o.cost_model);
    s.add("outside_calibrated_range", r.uncalibrated_ops);
    std::vector<Record> stages;
    for (size_t i = 0; i < r.stages.size(); ++i) {
        const auto& st = r.stages[i];
        Record x;
        x.add("stage", static_cast<int64_t>(i));
        x.add("layers", static_cast<int64_t>(st.layers));
        x.add("compute_s", st.compute_s);
        x.add("tp_comm_s", st.tp_comm_s);
        x.add("cp_comm_s", st.cp_comm_s);
        x.add("pp_comm_s", st.pp_comm_s);
        x.add("dp_comm_s", st.dp_comm_s);
        x.add("exposed_comm_s", st.exposed_comm_s);
        x.add("idle_s", st.idle_s);
        x.add("peak_in_flight", static_cast<int64_t>(st.peak_in_flight));
        x.add("memory_bytes.weights", st.memory.weights);
        x.add("memory_bytes.gradients", st.memory.gradients);
        x.add("memory_bytes.optimizer", st.memory.optimizer);
        x.add("memory_bytes.activations", st.memory.activations);
        x.add("memory_bytes.transient", st.memory.transient);
        x.add("memory_bytes.reserved", st.memory.reserved);
        x.add("memory_bytes.total", st.memory.total());
        stages.push_back(std::move(x));
    }
    rep.tables.emplace_back("stages", std::move(stages));
}

}  // namespace

const FieldValue* Record::find(const std::string& name) const {
    for (const auto& [k, v] : fields)
        if (k == name) return &v;
    return nullptr;
}

Report make_report(const Scenario& scenario, const Outcome& outcome) {
    Report rep;
    Record& s = rep.summary;
    s.add("scenario", scenario.name);
    s.add("kind", std::string(workload_kind_name(scenario.kind())));
    s.add("model", scenario.model.id);
    s.add("accelerator", scenario.cluster.accelerator.id);
    s.add("gpus", static_cast<int64_t>(scenario.cluster.gpus()));
    std::visit(
        [&s](const auto& plan) {
            char hash[24];
            std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(plan.hash()));
            s.add("stack", plan.stack_preset.empty() ? std::string("defaults") : plan.stack_preset);
            s.add("plan_hash", std::string(hash));
        },
        scenario.plan);
    if (!outcome.violations.empty()) {
        std::vector<std::string> v;
        for (const auto& x : outcome.violations) v.push_back(x.key + ": " + x.message);
        s.add("violations", v);
        return rep;
    }
    if (const auto* r = outcome.training()) add_training(rep, outcome, *r);
    return rep;
}

}  // namespace fathom::plans
