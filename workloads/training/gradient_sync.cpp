#include "workloads/training/gradient_sync.h"

#include <algorithm>
#include <cmath>

#include "workloads/training/training_tags.h"

namespace fathom::workloads {

using hardware::Collective;
using models::GroupKind;

GradientSync::GradientSync(sim::TaskGraph& graph, const TrainingPlan& plan, const StageMap& map, const StepCosts& costs,
                           ProgramCoster& coster, const std::vector<StageStreams>& streams, const TaskStyle& style)
    : graph_(graph), plan_(plan), map_(map), costs_(costs), coster_(coster), streams_(streams), style_(style),
      zero3_(plan.training.zero_stage >= 3 && plan.layout.dp * plan.layout.cp > 1),
      dp_sync_(plan.layout.dp * plan.layout.cp > 1 && !zero3_),
      parameter_gathers_(static_cast<size_t>(map.virtual_stages())),
      gradient_tasks_(static_cast<size_t>(map.stages())) {}

void GradientSync::issue_parameter_gathers() {
    const int zero = plan_.training.zero_stage;
    if (zero < 1 || zero > 2 || !plan_.stack.param_gather_overlap || !dp_sync_) return;
    const double bucket_params = plan_.stack.bucket_params;
    const double layer_params = costs_.layer_params;
    for (int v = 0; v < map_.virtual_stages(); ++v) {
        const int stage = map_.owner(v);
        auto& gathers = parameter_gathers_[static_cast<size_t>(v)];
        double bucket = 0;
        sim::TaskId current = 0;
        for (int l = 0; l < map_.layers(v); ++l) {
            if (l == 0 || bucket >= bucket_params) {
                const int n = static_cast<int>(std::min<double>(std::ceil(bucket_params / layer_params), map_.layers(v) - l));
                const double t = coster_.collective(Collective::AllGather, n * layer_params * 2.0, GroupKind::dp);
                current = graph_.add_task(streams_[static_cast<size_t>(stage)].of(GroupKind::dp), sim::Time::from_seconds(t),
                                          (*style_.names)[kDpParamGather], kDpParamGather, -1, l);
                bucket = 0;
            }
            bucket += layer_params;
            gathers.push_back(current);
        }
    }
}

std::optional<sim::TaskId> GradientSync::parameter_gather(int v, int layer) const {
    const auto& g = parameter_gathers_[static_cast<size_t>(v)];
    if (g.empty()) return std::nullopt;
    return g[static_cast<size_t>(layer)];
}

sim::TaskId GradientSync::layer_gather(int stage, int mb, int layer) {
    return graph_.add_task(streams_[static_cast<size_t>(stage)].of(GroupKind::dp), sim::Time::from_seconds(costs_.zero3_gather),
                           (*style_.names)[kDpParamGather], kDpParamGather, mb, layer);
}

void GradientSync::begin_gradient_pass(bool last_of_chunk) {
    last_of_chunk_ = last_of_chunk;
    bucket_ = 0;
}

void GradientSync::layer_gradients(int stage, sim::TaskId compute, int mb, int layer, int position, int layers) {
    const sim::StreamId dp = streams_[static_cast<size_t>(stage)].of(GroupKind::dp);
    auto& tasks = gradient_tasks_[static_cast<size_t>(stage)];
    if (zero3_) {
        const sim::TaskId rs = graph_.add_task(dp, sim::Time::from_seconds(costs_.zero3_reduce),
                                               (*style_.names)[kDpGradSync], kDpGradSync, mb, layer);
        graph_.add_dependency(compute, rs);
        tasks.push_back(rs);
        return;
    }
    if (!dp_sync_ || !last_of_chunk_) return;
    bucket_ += costs_.layer_params;
    if (bucket_ >= plan_.stack.bucket_params || position == layers - 1) {
        const Collective op = plan_.training.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce;
        const double t = coster_.collective(op, bucket_ * plan_.stack.grad_bytes, GroupKind::dp);
        const sim::TaskId g = graph_.add_task(dp, sim::Time::from_seconds(t), (*style_.names)[kDpGradSync], kDpGradSync, mb, layer);
        graph_.add_dependency(compute, g);
        tasks.push_back(g);
        bucket_ = 0;
    }
}

void GradientSync::finish(int stage, sim::TaskId last_gradient_pass) {
    const auto& st = streams_[static_cast<size_t>(stage)];
    const auto& tasks = gradient_tasks_[static_cast<size_t>(stage)];
    // Without overlap, gradient reduction starts only after the stage's whole backward.
    if (!plan_.stack.dp_comm_overlap)
        for (sim::TaskId g : tasks) graph_.add_dependency(last_gradient_pass, g);
    const int dp_ranks = plan_.layout.dp * plan_.layout.cp;
    const double stage_params = map_.stage_params(stage);
    const double shard = plan_.training.zero_stage >= 1 ? stage_params / dp_ranks : stage_params;
    // Fused Adam: read fp32 master, m, v and the gradient; write master, m, v and the bf16 weight.
    // Priced as the measured binary elementwise kernel (a streaming multi-tensor update).
    models::OpDesc adam = models::memory_op("adam", shard * (4 * 3 + plan_.stack.grad_bytes + 4 * 3 + 2),
                                            models::OpRole::Optimizer, "residual_add");
    adam.kind = models::OpKind::Optimizer;
    const sim::TaskId o = graph_.add_task(st.compute, sim::Time::from_seconds(coster_.seconds(adam)),
                                          (*style_.names)[kOptimizer], kOptimizer, -1, -1);
    for (sim::TaskId g : tasks) graph_.add_dependency(g, o);
    graph_.add_dependency(last_gradient_pass, o);
    const int zero = plan_.training.zero_stage;
    if (zero >= 1 && zero <= 2 && !plan_.stack.param_gather_overlap && dp_ranks > 1) {
        const double t = coster_.collective(Collective::AllGather, stage_params * 2.0, GroupKind::dp);
        const sim::TaskId ag = graph_.add_task(st.of(GroupKind::dp), sim::Time::from_seconds(t),
                                               (*style_.names)[kDpParamGather], kDpParamGather, -1, -1);
        graph_.add_dependency(o, ag);
    }
}

}  // namespace fathom::workloads
