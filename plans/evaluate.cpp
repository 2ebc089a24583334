#include "plans/evaluate.h"

#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "workloads/serving/serving_memory.h"

namespace fathom::plans {

std::unique_ptr<models::CostModel> cost_model_for(const hardware::AcceleratorSpec& acc,
                                                  const EvaluationContext& context, std::string& kind,
                                                  models::Load load) {
    if (auto table = context.cost_table(acc.id)) {
        kind = "table";
        return std::make_unique<models::TableCost>(std::move(table), acc, load);
    }
    kind = "roofline";
    return models::make_roofline_cost(acc, load);
}

Outcome evaluate_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                          const workloads::TrainingPlan& plan, const EvaluationContext& context,
                          const EvaluateOptions& options) {
    Outcome out;
    out.violations = check_training_plan(model, cluster, plan);
    if (out.violations.empty()) out.violations = check_replay_size(model, plan, context.max_tasks);
    if (!out.violations.empty()) return out;
    const auto cost = cost_model_for(cluster.accelerator, context, out.cost_model);
    const auto network = hardware::make_network(context.with_network(cluster), context.collective_algorithm);
    if (options.progress) network->set_progress([&options](int64_t simulated) { options.progress(simulated, 0); });
    const workloads::StepInputs in{model, cluster, plan, *cost, *network};
    out.report = workloads::simulate_training_step(in, options.trace);
    return out;
}

Outcome evaluate_serving(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                         const workloads::serving::ServingPlan& plan, const EvaluationContext& context, uint64_t seed,
                         const EvaluateOptions& options) {
    using namespace workloads::serving;
    Outcome out;
    out.violations = check_serving_plan(model, cluster, plan);
    if (!out.violations.empty()) return out;
    auto fits = [&](const PoolLayout& pool, const std::string& key) {
        const ReplicaMemory m = replica_memory(model, pool, plan.kernels, plan.kv, plan.batching, plan.engine);
        if (!m.fits()) out.violations.push_back({key, m.why_not()});
    };
    if (plan.disaggregated()) {
        if (plan.isolate != PoolIsolation::Decode) fits(*plan.prefill, "serving.disaggregation.prefill.tp");
        if (plan.isolate != PoolIsolation::Prefill) fits(*plan.decode, "serving.disaggregation.decode.tp");
    } else {
        fits(plan.replica, "serving.tp");
    }
    if (!out.violations.empty()) return out;
    const PoolLayout& first = !plan.disaggregated()                   ? plan.replica
                              : plan.isolate == PoolIsolation::Decode ? *plan.decode
                                                                      : *plan.prefill;
    const auto cost = cost_model_for(first.accelerator, context, out.cost_model, models::Load::Serving);
    std::unique_ptr<models::CostModel> decode_cost;
    if (plan.disaggregated() && plan.decode->accelerator.id != first.accelerator.id) {
        std::string kind;
        decode_cost = cost_model_for(plan.decode->accelerator, context, kind, models::Load::Serving);
        if (kind != out.cost_model) out.cost_model = "mixed";
    }
    const auto network = hardware::make_network(context.with_network(cluster), context.collective_algorithm);
    std::unique_ptr<RequestSource> source = plan.traffic.trace.empty()
                                                ? make_synthetic_source(plan.traffic.synthetic, seed)
                                                : open_trace(plan.traffic.trace);
    const ServingInputs in{model, cluster, plan, *cost, decode_cost.get(), *network};
    ServingOptions so;
    so.keep_records = options.keep_records;
    so.trace = options.trace;
    so.progress = options.progress;
    out.report = simulate_serving(in, *source, so);
    return out;
}

Outcome evaluate(const Scenario& s, const EvaluationContext& context, const EvaluateOptions& options) {
    return std::visit(
        [&](const auto& plan) -> Outcome {
            using T = std::decay_t<decltype(plan)>;
            if constexpr (std::is_same_v<T, workloads::TrainingPlan>)
                return evaluate_training(s.model, s.cluster, plan, context, options);
            else return evaluate_serving(s.model, s.cluster, plan, context, s.seed, options);
        },
        s.plan);
}

}  // namespace fathom::plans
