#include "plans/evaluator.h"

#include "models/cost/calibration_table.h"
#include "models/cost/cost_model.h"
#include "sim/error.h"

namespace fathom::plans {

workloads::StepReport evaluate_training(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                        const workloads::TrainingPlan& plan, const EvaluateOptions& options) {
    const auto violations = check_training_plan(model, cluster, plan);
    if (!violations.empty()) {
        std::string msg = "impossible plan:";
        for (const auto& v : violations) msg += "\n  " + v.key + ": " + v.message;
        throw sim::InputError(msg, "", 0, violations.front().key);
    }
    std::unique_ptr<models::CostModel> cost;
    if (options.cost_table)
        cost = std::make_unique<models::TableCost>(*options.cost_table, cluster.accelerator, models::Load::Sustained);
    else
        cost = models::make_roofline_cost(cluster.accelerator, models::Load::Sustained);
    const auto network = hardware::make_analytical_network(cluster, options.collective_algorithm);
    const workloads::StepInputs in{model, cluster, plan, *cost, *network};
    return workloads::simulate_training_step(in, options.trace);
}

}  // namespace fathom::plans
