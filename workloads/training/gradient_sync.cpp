#include "workloads/training/gradient_sync.h"

#include "workloads/training/training_tags.h"

#include <algorithm>
#include <cmath>

namespace fathom::workloads {

using hardware::Collective;
using models::GroupKind;

GradientSync::GradientSync(sim::TaskGraph& graph, const TrainingPlan& plan, const StageMap& map, const StepCosts& costs,
                           ProgramCoster& coster, const std::vector<StageStreams>& streams, const TaskStyle& style,
                           std::vector<std::vector<CommTask>>& carried)
    : graph_(graph),
      plan_(plan),
      map_(map),
      costs_(costs),
      coster_(coster),
      streams_(streams),
      style_(style),
      carried_(carried),
      zero3_(plan.training.zero_stage >= 3 && has_traffic(plan, costs)),
      dp_sync_(has_traffic(plan, costs) && !zero3_),
      parameter_gathers_(static_cast<size_t>(map.virtual_stages())),
      gradient_tasks_(static_cast<size_t>(map.stages())) {}

bool GradientSync::has_traffic(const TrainingPlan& plan, const StepCosts& costs) {
    return plan.layout.dp * plan.layout.cp > 1 ||
           (costs.moe.expert_params > 0 && plan.layout.group(GroupKind::edp).size > 1);
}

sim::TaskId GradientSync::dp_task(int stage, double seconds, uint16_t tag, int mb, int layer, const CommMoves& moves) {
    const sim::TaskId t = graph_.add_task(streams_[static_cast<size_t>(stage)].of(GroupKind::dp),
                                          sim::Time::from_seconds(seconds), (*style_.names)[tag], tag, mb, layer);
    if (!carried_.empty())
        carried_[static_cast<size_t>(stage)].push_back(CommTask{t, GroupKind::dp, kAllParts, -1, &moves});
    return t;
}

sim::TaskId GradientSync::dp_task(int stage, double seconds, uint16_t tag, int mb, int layer, Collective op,
                                  double params, double expert_params, double bytes_per_param) {
    static const CommMoves none;
    if (carried_.empty()) return dp_task(stage, seconds, tag, mb, layer, none);  // nothing listed
    CommMoves& m = moves_.emplace_back();
    if (params > 0) m.push_back({op, params * bytes_per_param, GroupKind::dp});
    if (expert_params > 0) m.push_back({op, expert_params * bytes_per_param, GroupKind::edp});
    return dp_task(stage, seconds, tag, mb, layer, m);
}

double GradientSync::dp_collective(Collective op, double params, double expert_params, double bytes_per_param) const {
    double t = 0;
    if (params > 0) t += coster_.collective(op, params * bytes_per_param, GroupKind::dp);
    if (expert_params > 0) t += coster_.collective(op, expert_params * bytes_per_param, GroupKind::edp);
    return t;
}

void GradientSync::issue_parameter_gathers() {
    const int zero = plan_.training.zero_stage;
    if (zero < 1 || zero > 2 || !plan_.stack.param_gather_overlap || !dp_sync_) return;
    const double bucket_params = plan_.stack.bucket_params;
    for (int v = 0; v < map_.virtual_stages(); ++v) {
        const int stage = map_.owner(v);
        auto& gathers = parameter_gathers_[static_cast<size_t>(v)];
        // Buckets of whole layers, each closed once it holds bucket_params or more.
        int l = 0;
        while (l < map_.layers(v)) {
            double params = 0, experts = 0;
            int end = l;
            while (end < map_.layers(v) && params + experts < bucket_params) {
                const LayerCost& c = costs_.layer(map_.is_moe(v, end));
                params += c.params;
                experts += c.expert_params;
                ++end;
            }
            const double t = dp_collective(Collective::AllGather, params, experts, 2.0);
            const sim::TaskId g = dp_task(stage, t, kDpParamGather, -1, l, Collective::AllGather, params, experts, 2.0);
            for (; l < end; ++l) gathers.push_back(g);
        }
    }
}

std::optional<sim::TaskId> GradientSync::parameter_gather(int v, int layer) const {
    const auto& g = parameter_gathers_[static_cast<size_t>(v)];
    if (g.empty()) return std::nullopt;
    return g[static_cast<size_t>(layer)];
}

sim::TaskId GradientSync::layer_gather(int stage, int mb, int layer, const LayerCost& cost) {
    return dp_task(stage, cost.zero3_gather, kDpParamGather, mb, layer, cost.zero3_gather_moves);
}

void GradientSync::begin_gradient_pass(bool last_of_chunk) {
    last_of_chunk_ = last_of_chunk;
    bucket_ = expert_bucket_ = 0;
}

void GradientSync::layer_gradients(int stage, sim::TaskId compute, int mb, int layer, int position, int layers,
                                   const LayerCost& cost) {
    if (!zero3_ && (!dp_sync_ || !last_of_chunk_)) return;
    auto& tasks = gradient_tasks_[static_cast<size_t>(stage)];
    if (zero3_) {
        const sim::TaskId rs = dp_task(stage, cost.zero3_reduce, kDpGradSync, mb, layer, cost.zero3_reduce_moves);
        graph_.add_dependency(compute, rs);
        tasks.push_back(rs);
        return;
    }
    bucket_ += cost.params;
    expert_bucket_ += cost.expert_params;
    if (bucket_ + expert_bucket_ >= plan_.stack.bucket_params || position == layers - 1) {
        const Collective op = plan_.training.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce;
        const double t = dp_collective(op, bucket_, expert_bucket_, plan_.stack.main_grad_bytes());
        const sim::TaskId g =
            dp_task(stage, t, kDpGradSync, mb, layer, op, bucket_, expert_bucket_, plan_.stack.main_grad_bytes());
        graph_.add_dependency(compute, g);
        tasks.push_back(g);
        bucket_ = expert_bucket_ = 0;
    }
}

void GradientSync::finish(int stage, sim::TaskId last_gradient_pass) {
    const auto& st = streams_[static_cast<size_t>(stage)];
    const auto& tasks = gradient_tasks_[static_cast<size_t>(stage)];
    // Without overlap, gradient reduction starts only after the stage's whole backward. ZeRO-3
    // reduce-scatters each layer as its backward ends whatever the setting: the dp stream also
    // carries the gathers the rest of the backward waits for, so holding the reductions back
    // would deadlock the stream.
    if (!plan_.stack.dp_comm_overlap && !zero3_)
        for (sim::TaskId g : tasks) graph_.add_dependency(last_gradient_pass, g);
    const int dp_ranks = plan_.layout.dp * plan_.layout.cp;
    const int expert_ranks = plan_.layout.group(GroupKind::edp).size;
    // The trained parameters (under LoRA the adapters only) are updated and re-gathered.
    const double stage_params = map_.stage_trained_params(stage),
                 expert_params = map_.stage_trained_expert_params(stage);
    const double shard = plan_.training.zero_stage >= 1 ? stage_params / dp_ranks + expert_params / expert_ranks
                                                        : stage_params + expert_params;
    // Fused Adam: read fp32 master, m, v and the gradient; write master, m, v and the bf16 weight.
    // Priced as the measured binary elementwise kernel (a streaming multi-tensor update).
    models::OpDesc adam = models::memory_op("adam", shard * (4 * 3 + plan_.stack.main_grad_bytes() + 4 * 3 + 2),
                                            models::OpRole::Optimizer, "residual_add");
    adam.kind = models::OpKind::Optimizer;
    const sim::TaskId o = graph_.add_task(st.compute, sim::Time::from_seconds(coster_.seconds(adam)),
                                          (*style_.names)[kOptimizer], kOptimizer, -1, -1);
    for (sim::TaskId g : tasks) graph_.add_dependency(g, o);
    graph_.add_dependency(last_gradient_pass, o);
    const int zero = plan_.training.zero_stage;
    if (zero >= 1 && zero <= 2 && !plan_.stack.param_gather_overlap && dp_sync_) {
        const double t = dp_collective(Collective::AllGather, stage_params, expert_params, 2.0);
        const sim::TaskId ag =
            dp_task(stage, t, kDpParamGather, -1, -1, Collective::AllGather, stage_params, expert_params, 2.0);
        graph_.add_dependency(o, ag);
    }
}

}  // namespace fathom::workloads
