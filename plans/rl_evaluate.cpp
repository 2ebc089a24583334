#include "plans/rl_evaluate.h"

#include "hardware/network/network_model.h"
#include "plans/catalog.h"
#include "plans/keys.h"
#include "plans/report.h"
#include "sim/random.h"
#include "workloads/replay/program_cost.h"
#include "workloads/rl/rl_pipeline.h"
#include "workloads/rl/rl_timeline.h"
#include "workloads/rl/rollout.h"
#include "workloads/training/step_costs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fathom::plans {
namespace {

using workloads::rl::Layout;
using workloads::rl::PhaseTimes;
using workloads::rl::RlPlan;
using workloads::rl::RlReport;
using workloads::rl::RolloutBatch;
using workloads::rl::SyncPath;

// The update's training plan over `batch`: packed sequences of training.seq_len tokens, one
// optimizer step's worth (the batch over rl.minibatches), a whole number of micro-batches on every
// data-parallel rank.
workloads::TrainingPlan update_plan(const RlPlan& p, const RolloutBatch& batch) {
    workloads::TrainingPlan t = p.trainer;
    const int64_t tokens = batch.train_tokens(p.rl.shared_prompt);
    const auto per_step = static_cast<double>(tokens) / p.rl.minibatches;
    const int64_t sequences = static_cast<int64_t>(std::ceil(per_step / static_cast<double>(t.training.seq_len)));
    const int64_t unit = int64_t{t.layout.dp} * t.training.micro_batch;
    const int64_t rounded = std::max<int64_t>(unit, (sequences + unit - 1) / unit * unit);
    t.training.global_batch = static_cast<int>(std::min<int64_t>(rounded, 2147483647));
    t.training.documents = workloads::rl::histogram_of(batch.documents(p.rl.shared_prompt));
    t.training.documents.max = t.training.seq_len;
    return t;
}

// A forward pass's share of a training step: the layers' forward compute over forward + backward
// (backward with its recomputation), on the plan's layer kind that dominates.
double forward_share(const models::ModelSpec& model, const workloads::TrainingPlan& plan, const models::CostModel& cost,
                     const hardware::NetworkModel& network) {
    workloads::ProgramCoster coster(cost, network, plan.layout);
    const workloads::StepCosts sc = workloads::cost_training_step(model, plan, coster);
    const workloads::LayerCost& layer = model.moe.enabled() ? sc.moe : sc.dense;
    const double fwd = layer.pass[workloads::pass_index(workloads::PassKind::Forward)].compute;
    const double bwd = layer.pass[workloads::pass_index(workloads::PassKind::Backward)].compute;
    return fwd + bwd > 0 ? fwd / (fwd + bwd) : 1.0 / 3.0;
}

// The weight transfer, trainer to rollout engines, priced on the whole cluster's network.
double sync_seconds(const hardware::ClusterSpec& cluster, const RlPlan& p, const EvaluationContext& context,
                    double weight_bytes) {
    const auto& r = p.rollout.replica;
    const int shards = r.tp * r.pp;
    const double shard = weight_bytes / shards;
    const auto network = hardware::make_network(context.with_network(cluster), context.collective_algorithm);
    const double pcie = cluster.pcie.achievable_bandwidth();
    const int64_t rollout = p.rl.rollout_pool(cluster.gpus());
    if (p.rl.sync == SyncPath::Ipc) {
        // The trainer's shards gathered within a node into each engine GPU's shard.
        const int g = static_cast<int>(std::min<int64_t>(cluster.gpus_per_node, p.rl.trainer_pool(cluster.gpus())));
        return g > 1 ? network->collective(hardware::Collective::AllGather, shard, hardware::CommGroup(g, 1)).seconds
                     : 0.0;
    }
    // One broadcast per engine shard (all at once, on GPUs of their own): from a trainer GPU to that
    // shard's GPU in every engine. Colocated, the first engine's GPU is the trainer's and the source.
    const bool colocated = p.rl.layout == Layout::Colocated;
    std::vector<int> members{colocated ? 0 : static_cast<int>(rollout)};
    for (int64_t g = colocated ? shards : 0; g < rollout; g += shards) members.push_back(static_cast<int>(g));
    if (members.size() < 2) return 0.0;
    const double bcast =
        network->collective(hardware::Collective::Broadcast, shard, hardware::CommGroup::of(members)).seconds;
    if (p.rl.sync == SyncPath::Nccl) return bcast;
    // Host: the trainer's shard out to host memory, the broadcast, each engine shard in.
    const double trainer_shard = weight_bytes / static_cast<double>(p.rl.trainer_pool(cluster.gpus()));
    return pcie > 0 ? trainer_shard / pcie + bcast + shard / pcie : bcast;
}

}  // namespace

workloads::serving::ServingPlan rl_rollout_plan(const RlPlan& p, int64_t answers) {
    workloads::serving::ServingPlan s = p.rollout;
    s.traffic.mode = workloads::serving::ArrivalMode::Open;
    s.traffic.trace.clear();
    s.traffic.warmup_requests = 0;
    s.traffic.synthetic = {};
    s.traffic.synthetic.arrival.kind = workloads::serving::ArrivalKind::Offline;
    s.traffic.synthetic.num_requests = answers > 0 ? answers : p.rl.prompts * p.rl.samples;
    s.traffic.synthetic.prompt = p.rl.prompt_len;
    s.traffic.synthetic.output = p.rl.response_len;
    return s;
}

hardware::ClusterSpec rl_pool_cluster(const hardware::ClusterSpec& cluster, int64_t gpus) {
    hardware::ClusterSpec c = cluster;
    if (gpus == cluster.gpus()) return c;
    const int per = gpus % cluster.gpus_per_node == 0
                        ? cluster.gpus_per_node
                        : static_cast<int>(std::gcd(gpus, static_cast<int64_t>(cluster.gpus_per_node)));
    c.nics_per_node = std::max(1, cluster.nics_per_node * per / cluster.gpus_per_node);
    c.gpus_per_node = per;
    c.nodes = static_cast<int>(gpus / per);
    return c;
}

namespace {

// Prices the iterations of one plan, one at a time, into a report.
class IterationPricer {
public:
    IterationPricer(const models::ModelSpec& model, const hardware::ClusterSpec& cluster, const RlPlan& p,
                    const EvaluationContext& context, uint64_t seed, RlReport& rep, RlMemo* memo)
        : model_(model),
          cluster_(cluster),
          p_(p),
          context_(context),
          seed_(seed),
          rep_(rep),
          memo_(memo),
          rollout_cluster_(rl_pool_cluster(cluster, rep.rollout_gpus)),
          trainer_cluster_(rl_pool_cluster(cluster, rep.trainer_gpus)),
          cost_(cost_model_for(trainer_cluster_.accelerator, context, kind)),
          network_(hardware::make_network(context.with_network(trainer_cluster_), context.collective_algorithm)) {
        // Models on the trainer's GPUs beside the policy.
        if (!p.rl.reward_model.empty()) reward_ = context.catalog->model(p.rl.reward_model);
        if (!p.rl.critic.empty()) critic_ = context.catalog->model(p.rl.critic);
    }
    CostModelKind kind{};

    // Iteration i's phases, or the violations that stop the plan.
    std::vector<Violation> price(int i) {
        const RolloutBatch batch = workloads::rl::draw_rollout_batch(p_.rl, seed_, i);
        PhaseTimes ph;
        const workloads::serving::ServingPlan rollout = rl_rollout_plan(p_);
        const auto served = shared("R" + std::to_string(serving_hash(rollout)) + "|" + batch_key(i), [&] {
            const auto source = workloads::rl::rollout_source(batch);
            return evaluate_serving(model_, rollout_cluster_, rollout, context_, seed_ + static_cast<uint64_t>(i), {},
                                    source.get());
        });
        if (!served->ok()) return served->violations;
        const auto& sr = *served->serving();
        // Every answer is asked for at 0: its completion is its end-to-end latency.
        ph.rollout_s = sr.e2e_s.max;
        ph.tail_s = sr.e2e_s.max - sr.e2e_s.p90;
        if (p_.rl.partial_rollout) {
            // Engines kept busy across batches: one more batch's marginal time, the makespan of
            // this batch and a companion (drawn from other streams) at once less this one's.
            const RolloutBatch two = workloads::rl::joined(
                batch, workloads::rl::draw_rollout_batch(p_.rl, sim::mix64(seed_ ^ 0x9E3779B97F4A7C15ull), i));
            const auto both = shared("R2" + std::to_string(serving_hash(rollout)) + "|" + batch_key(i), [&] {
                const auto source = workloads::rl::rollout_source(two);
                return evaluate_serving(model_, rollout_cluster_, rl_rollout_plan(p_, two.answers()), context_,
                                        seed_ + static_cast<uint64_t>(i), {}, source.get());
            });
            if (!both->ok()) return both->violations;
            ph.rollout_s = std::max(0.0, both->serving()->e2e_s.max - sr.e2e_s.max);
            ph.tail_s = 0;
        }
        // Update: one step per mini-batch and epoch; each forward pass over the whole batch once.
        const workloads::TrainingPlan up = update_plan(p_, batch);
        const auto step = trained(model_, up);
        if (!step->ok()) return step->violations;
        const auto& st = *step->training();
        if (i == 0) first(up, batch, st);
        ph.update_s = st.step_time_s * static_cast<double>(rep_.optimizer_steps);
        ph.forward_s = rep_.forward_share * st.step_time_s * p_.rl.minibatches *
                       ((p_.rl.old_logprob ? 1 : 0) + (p_.rl.reference ? 1 : 0));
        for (const auto* m : {reward_ ? &*reward_ : nullptr, critic_ ? &*critic_ : nullptr}) {
            if (!m) continue;
            const auto o = trained(*m, up);
            if (!o->ok()) return {{m == &*reward_ ? "rl.reward_model" : "rl.critic", describe(o->violations)}};
            const double pass = o->training()->step_time_s * p_.rl.minibatches;
            ph.forward_s += forward_share(*m, up, *cost_, *network_) * pass;
            if (m == &*critic_) ph.update_s += o->training()->step_time_s * static_cast<double>(rep_.optimizer_steps);
        }
        ph.sync_s = sync_s_;
        const double pcie = cluster_.pcie.achievable_bandwidth();
        if (p_.rl.layout == Layout::Colocated && pcie > 0) {
            // Out and back in over each GPU's host link.
            double bytes = p_.rl.offload_rollout ? sr.weight_bytes_per_gpu : 0;
            if (p_.rl.offload_trainer && !st.stages.empty()) {
                const auto& mem = st.stages.front().memory;
                bytes += mem.weights + mem.gradients + mem.optimizer;
            }
            ph.offload_s = 2 * bytes / pcie;
        }
        rep_.mean_response_tokens +=
            static_cast<double>(batch.response_tokens()) / static_cast<double>(batch.answers());
        if (i == 0) {
            rep_.rollout = sr;
            rep_.rollout.records.clear();
            rep_.update = st;
        }
        rep_.phases.push_back(ph);
        return {};
    }

private:
    // `compute`'s outcome, shared through the memo under `key` when there is one.
    template <typename F>
    std::shared_ptr<const Outcome> shared(const std::string& key, F&& compute) {
        if (memo_) return memo_->get(key + "|" + std::to_string(seed_), compute);
        return std::make_shared<const Outcome>(compute());
    }
    // One training step of `m` under `up` on the trainer's pool.
    std::shared_ptr<const Outcome> trained(const models::ModelSpec& m, const workloads::TrainingPlan& up) {
        return shared("U" + m.id + "|" + std::to_string(up.hash()) + "|" + std::to_string(rep_.trainer_gpus),
                      [&] { return evaluate_training(m, trainer_cluster_, up, context_); });
    }
    // What iteration i's batch depends on: the batch keys, the rollout pool, the iteration.
    std::string batch_key(int i) const {
        std::string k = std::to_string(rep_.rollout_gpus) + "|" + std::to_string(i);
        for (const auto& key : rl_keys())
            if (key.info.path.rfind("rl.prompt", 0) == 0 || key.info.path.rfind("rl.response", 0) == 0 ||
                key.info.path == "rl.samples")
                k += "|" + format_value(key.get(p_));
        return k;
    }
    // What the first iteration fixes for all: the forward share, the update's shape, the sync.
    void first(const workloads::TrainingPlan& up, const RolloutBatch& batch, const workloads::StepReport& st) {
        rep_.forward_share = forward_share(model_, up, *cost_, *network_);
        rep_.update_sequences = up.training.global_batch;
        rep_.trainer_layout = up.describe();
        rep_.shared_prompt_reduction = p_.rl.shared_prompt ? batch.shared_prompt_reduction() : 1.0;
        rep_.out_of_memory = st.out_of_memory;
        // The engine's weights: the bf16 or fp8 of its GEMMs (quantized rollouts take fp8).
        rep_.sync_bytes =
            model_.total_params(up.training.seq_len) * hardware::dtype_bytes(p_.rollout.kernels.gemm_dtype);
        sync_s_ = sync_seconds(cluster_, p_, context_, rep_.sync_bytes);
    }

    const models::ModelSpec& model_;
    const hardware::ClusterSpec& cluster_;
    const RlPlan& p_;
    const EvaluationContext& context_;
    uint64_t seed_;
    RlReport& rep_;
    RlMemo* memo_;
    hardware::ClusterSpec rollout_cluster_, trainer_cluster_;
    std::unique_ptr<models::CostModel> cost_;
    std::unique_ptr<hardware::NetworkModel> network_;
    std::optional<models::ModelSpec> reward_, critic_;
    double sync_s_ = 0;
};

}  // namespace

Outcome evaluate_rl(const models::ModelSpec& model, const hardware::ClusterSpec& cluster, const RlPlan& p,
                    const EvaluationContext& context, uint64_t seed, const EvaluateOptions& options, RlMemo* memo) {
    Outcome out;
    out.violations = check_rl_plan(model, cluster, p);
    if (!out.violations.empty()) return out;
    RlReport rep;
    rep.gpus = cluster.gpus();
    rep.rollout_gpus = p.rl.rollout_pool(cluster.gpus());
    rep.trainer_gpus = p.rl.trainer_pool(cluster.gpus());
    rep.optimizer_steps = int64_t{p.rl.minibatches} * p.rl.epochs;
    const int iterations = p.rl.simulated_iterations();
    IterationPricer pricer(model, cluster, p, context, seed, rep, memo);
    for (int i = 0; i < iterations; ++i) {
        out.violations = pricer.price(i);
        if (!out.violations.empty()) return out;
        if (options.progress) options.progress(i + 1, iterations);
    }
    const double n = static_cast<double>(rep.phases.size());
    rep.mean_response_tokens /= n;
    for (const PhaseTimes& ph : rep.phases) {
        rep.mean.rollout_s += ph.rollout_s / n;
        rep.mean.tail_s += ph.tail_s / n;
        rep.mean.forward_s += ph.forward_s / n;
        rep.mean.update_s += ph.update_s / n;
        rep.mean.sync_s += ph.sync_s / n;
        rep.mean.offload_s += ph.offload_s / n;
    }
    rep.pipeline = workloads::rl::run_pipeline(rep.phases, p.rl.layout, p.rl.staleness);
    rep.iteration_s = rep.pipeline.iteration_s;
    const double answers = static_cast<double>(p.rl.prompts * p.rl.samples);
    rep.samples_per_s = answers / rep.iteration_s;
    rep.samples_per_s_per_gpu = rep.samples_per_s / static_cast<double>(rep.gpus);
    rep.response_tokens_per_s = rep.samples_per_s * rep.mean_response_tokens;
    rep.train_tokens_per_s =
        static_cast<double>(rep.update_sequences) * p.trainer.training.seq_len * p.rl.minibatches / rep.iteration_s;
    out.cost_model = pricer.kind;
    if (options.trace) workloads::rl::write_timeline(rep, p.rl.layout, *options.trace);
    out.report = std::move(rep);
    return out;
}

}  // namespace fathom::plans
