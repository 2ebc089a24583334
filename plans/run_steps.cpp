#include "plans/run_steps.h"

#include "plans/evaluate.h"
#include "plans/run_elastic.h"
#include "workloads/training/training_memory.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace fathom::plans {

double step_with_nics(const Scenario& s, const EvaluationContext& context, double nic_factor) {
    hardware::ClusterSpec cluster = s.cluster;
    cluster.nic.bandwidth *= nic_factor;
    const Outcome o = evaluate_training(s.model, cluster, *s.training(), context, {});
    return o.ok() ? o.training()->step_time_s : 0.0;
}

RunSteps run_steps(const Scenario& s, const EvaluationContext& context, bool elastic, bool drain) {
    RunSteps out;
    const workloads::TrainingPlan& plan = *s.training();
    if (drain) {
        RunRequest async = *s.run;
        async.method = CheckpointMethod::Async;
        const CheckpointPlan k = plan_checkpoint(s.model, s.cluster, plan, async);
        if (k.violations.empty() && k.cost.drain_nic_share > 0)
            out.drain_step_s = step_with_nics(s, context, 1 - k.cost.drain_nic_share);
    }
    if (!elastic) return out;
    for (const workloads::StageMemory& st : workloads::estimate_training_memory(s.model, s.cluster, plan).stages)
        out.state_bytes_per_gpu = std::max(out.state_bytes_per_gpu, st.memory.weights + st.memory.optimizer);
    struct Priced {
        models::ModelSpec model;
        hardware::ClusterSpec cluster;
        workloads::TrainingPlan plan;
        EvaluationContext context;
        std::map<int, double> steps;
        std::mutex mutex;  // runs of several threads may share one plan's steps (a run search)
    };
    auto priced = std::make_shared<Priced>();
    priced->model = s.model;
    priced->cluster = s.cluster;
    priced->plan = plan;
    priced->context = context;
    out.degraded_step_s = [priced](int out_nodes) {
        const std::lock_guard<std::mutex> lock(priced->mutex);
        const auto [it, fresh] = priced->steps.emplace(out_nodes, 0.0);
        if (!fresh) return it->second;
        const std::optional<DegradedLayout> d = degraded_layout(priced->cluster, priced->plan, out_nodes);
        if (!d) return 0.0;
        const Outcome o = evaluate_training(priced->model, d->cluster, d->plan, priced->context, {});
        if (o.ok() && !o.training()->out_of_memory) it->second = o.training()->step_time_s;
        return it->second;
    };
    return out;
}

}  // namespace fathom::plans
