#include "plans/evaluate.h"

#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "plans/keys.h"
#include "plans/rl_evaluate.h"
#include "plans/run_steps.h"
#include "sim/error.h"
#include "sim/stable_hash.h"
#include "workloads/serving/serving_memory.h"

#include <algorithm>

namespace fathom::plans {

std::unique_ptr<models::CostModel> cost_model_for(const hardware::AcceleratorSpec& acc,
                                                  const EvaluationContext& context, CostModelKind& kind,
                                                  models::Load load) {
    if (auto table = context.cost_table(acc.id)) {
        kind = CostModelKind::Table;
        return std::make_unique<models::TableCost>(std::move(table), acc, load);
    }
    kind = CostModelKind::Roofline;
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
    try {
        out.report = workloads::simulate_training_step(in, options.trace);
    } catch (const sim::TimeRangeError& e) {
        // The step's length grows with its micro-batches: the global batch sets the scale.
        throw sim::TimeRangeError(e.bare_message(), "", 0, "training.global_batch_size");
    }
    return out;
}

Outcome evaluate_serving(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                         const workloads::serving::ServingPlan& plan, const EvaluationContext& context, uint64_t seed,
                         const EvaluateOptions& options, workloads::serving::RequestSource* given) {
    using namespace workloads::serving;
    Outcome out;
    out.violations = check_serving_plan(model, cluster, plan);
    if (out.violations.empty()) out.violations = check_serving_size(plan, context.max_requests);
    if (!out.violations.empty()) return out;
    const std::vector<Pool> pools = plan.pools();
    for (const Pool& pool : pools) {
        if (!pool.simulated) continue;
        const ReplicaMemory m = replica_memory(model, *pool.layout, plan.kernels, plan.kv, plan.batching, plan.engine,
                                               plan.speculative, plan.lora);
        if (!m.fits()) out.violations.push_back({std::string(pool.key) + ".tp", m.why_not()});
    }
    if (!out.violations.empty()) return out;
    // A cost model per accelerator of the simulated pools.
    std::vector<std::unique_ptr<models::CostModel>> costs;
    std::vector<const models::CostModel*> pool_costs(pools.size(), nullptr);
    for (size_t i = 0; i < pools.size(); ++i) {
        if (!pools[i].simulated) continue;
        const hardware::AcceleratorSpec& acc = pools[i].layout->accelerator;
        for (size_t j = 0; j < i && !pool_costs[i]; ++j)
            if (pool_costs[j] && pools[j].layout->accelerator.id == acc.id) pool_costs[i] = pool_costs[j];
        if (pool_costs[i]) continue;
        CostModelKind kind{};
        costs.push_back(cost_model_for(acc, context, kind, models::Load::Serving));
        pool_costs[i] = costs.back().get();
        out.cost_model = costs.size() == 1 || kind == out.cost_model ? kind : CostModelKind::Mixed;
    }
    hardware::ClusterSpec net = context.with_network(cluster);
    net.peer_allreduce = plan.engine.custom_allreduce;
    const auto network = hardware::make_network(net, context.collective_algorithm);
    std::unique_ptr<RequestSource> owned;
    if (!given)
        owned = plan.traffic.trace.empty() ? make_synthetic_source(plan.traffic.synthetic, seed)
                                           : open_trace(plan.traffic.trace, context.max_requests);
    RequestSource& source = given ? *given : *owned;
    ServingInputs in{model, cluster, plan, pool_costs, *network, seed, nullptr, {}};
    if (options.cost_share) {
        in.cost_share = options.cost_share;
        for (const Pool& pool : pools) in.pool_signatures.push_back(pool_cost_signature(plan, *pool.layout));
    }
    ServingOptions so;
    so.keep_records = options.keep_records;
    so.trace = options.trace;
    so.series = options.series;
    so.progress = options.progress;
    try {
        out.report = simulate_serving(in, source, so);
    } catch (const sim::TimeRangeError& e) {
        // The run's length: the requests generated (arrivals within the range are the trace
        // reader's check), or the trace's.
        if (!plan.traffic.trace.empty()) throw sim::TimeRangeError(e.bare_message(), "", 0, "traffic.trace");
        throw sim::TimeRangeError(e.bare_message() + " (a run lasts about traffic.num_requests / traffic.rate)", "", 0,
                                  "traffic.num_requests");
    }
    return out;
}

uint64_t pool_cost_signature(const workloads::serving::ServingPlan& plan, const workloads::serving::PoolLayout& pool) {
    static const char* const outside_prefixes[] = {"traffic.",           "slo.",          "serving.disaggregation.",
                                                   "serving.autoscale.", "serving.lora.", "serving.kv_offload"};
    static const char* const outside[] = {"serving.tp",
                                          "serving.pp",
                                          "serving.replicas",
                                          "serving.ep",
                                          "serving.redundant_experts",
                                          "serving.dispatcher",
                                          "serving.accelerator",
                                          "serving.policy",
                                          "serving.max_num_seqs",
                                          "serving.max_num_batched_tokens",
                                          "serving.chunk_size",
                                          "serving.max_model_len",
                                          "serving.block_size",
                                          "serving.gpu_memory_utilization",
                                          "serving.memory_fraction_of",
                                          "serving.watermark",
                                          "serving.preemption",
                                          "serving.prefix_caching",
                                          "serving.kv_store",
                                          "serving.reserve_output",
                                          "serving.router",
                                          "serving.runtime_reserved",
                                          "serving.disaggregation",
                                          "serving.autoscale",
                                          "serving.lora"};
    sim::StableHash h;
    h.add(pool.accelerator.id).add(pool.tp).add(pool.pp).add(pool.ep).add(pool.redundant_experts).add(pool.dispatcher);
    for (const auto& k : serving_plan_keys()) {
        const std::string& path = k.info.path;
        if (std::any_of(std::begin(outside_prefixes), std::end(outside_prefixes),
                        [&](const char* p) { return path.rfind(p, 0) == 0; }) ||
            std::find(std::begin(outside), std::end(outside), path) != std::end(outside))
            continue;
        h.add(path).add(format_value(k.get(plan)));
    }
    return h.value();
}

Outcome evaluate(const Scenario& s, const EvaluationContext& context, const EvaluateOptions& options) {
    return std::visit(
        [&](const auto& plan) -> Outcome {
            using T = std::decay_t<decltype(plan)>;
            if constexpr (std::is_same_v<T, workloads::TrainingPlan>) {
                Outcome out = evaluate_training(s.model, s.cluster, plan, context, options);
                // The run's steps are the step priced once; a plan that does not fit has no run.
                if (s.run && out.ok() && !out.training()->out_of_memory) {
                    const RunSteps steps = run_steps(s, context, s.run->recovery == Recovery::Elastic,
                                                     s.run->method == CheckpointMethod::Async);
                    RunPlan run = plan_run(s, out.training()->step_time_s, *context.catalog, steps);
                    RunSummary summary = simulate_runs(run);
                    out.run = Outcome::Run{std::move(run), std::move(summary)};
                }
                return out;
            } else if constexpr (std::is_same_v<T, workloads::rl::RlPlan>) {
                return evaluate_rl(s.model, s.cluster, plan, context, s.seed, options);
            } else return evaluate_serving(s.model, s.cluster, plan, context, s.seed, options);
        },
        s.plan);
}

}  // namespace fathom::plans
