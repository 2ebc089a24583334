#include "plans/evaluate.h"

#include "models/cost/cost_model.h"

namespace fathom::plans {

Outcome evaluate_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                          const workloads::TrainingPlan& plan, const EvaluationContext& context,
                          const EvaluateOptions& options) {
    Outcome out;
    out.violations = check_training_plan(model, cluster, plan);
    if (!out.violations.empty()) return out;
    std::unique_ptr<models::CostModel> cost;
    if (auto table = context.cost_table(cluster.accelerator.id)) {
        cost = std::make_unique<models::TableCost>(std::move(table), cluster.accelerator, models::Load::Sustained);
        out.cost_model = "table";
    } else {
        cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
        out.cost_model = "roofline";
    }
    const auto network = hardware::make_analytical_network(cluster, context.collective_algorithm);
    const workloads::StepInputs in{model, cluster, plan, *cost, *network};
    out.report = workloads::simulate_training_step(in, options.trace);
    return out;
}

Outcome evaluate(const Scenario& s, const EvaluationContext& context, const EvaluateOptions& options) {
    return std::visit(
        [&](const auto& plan) -> Outcome {
            using T = std::decay_t<decltype(plan)>;
            if constexpr (std::is_same_v<T, workloads::TrainingPlan>)
                return evaluate_training(s.model, s.cluster, plan, context, options);
        },
        s.plan);
}

}  // namespace fathom::plans
