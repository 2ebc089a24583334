#pragma once
// Data-parallel parameter and gradient traffic of one training step, and the optimizer step that
// closes it, laid on each stage's dp-comm and compute streams:
// Routed-expert parameters are reduced and gathered over the expert data-parallel group (ranks
// holding the same experts), the rest over the data-parallel group.
//  - ZeRO-1/2 with overlap: the parameter all-gather of the previous step, one per bucket, issued
//    at the start of the step; the first forward of each layer waits for its bucket;
//  - ZeRO-3: each layer's parameters gathered before every forward and backward pass (prefetched
//    one layer ahead) and its gradients reduce-scattered after every backward pass;
//  - otherwise: gradient buckets reduced (ZeRO >= 1: reduce-scattered) as the last backward pass of
//    each model chunk produces them, or after the stage's whole backward without overlap;
//  - the optimizer step once a stage's gradients are reduced (fused Adam over its shard), and the
//    parameter all-gather after it when ZeRO-1/2 does not overlap it.
#include "sim/task_graph.h"
#include "workloads/replay/pass_chain.h"
#include "workloads/training/stage_map.h"
#include "workloads/training/step_costs.h"

#include <deque>
#include <optional>
#include <vector>

namespace fathom::workloads {

class GradientSync {
public:
    // Its tasks are listed in `carried` (per stage) for the network's timer, unless it is empty (no
    // list: a closed-form timer).
    GradientSync(sim::TaskGraph& graph, const TrainingPlan& plan, const StageMap& map, const StepCosts& costs,
                 ProgramCoster& coster, const std::vector<StageStreams>& streams, const TaskStyle& style,
                 std::vector<std::vector<CommTask>>& carried);

    // Whether the step has data-parallel traffic at all: a data-parallel group (dp x cp) of more
    // than one rank, or routed experts reduced over an expert data-parallel group of more than one.
    static bool has_traffic(const TrainingPlan& plan, const StepCosts& costs);

    // ZeRO-1/2 with overlap: issues the parameter gathers of every virtual stage.
    void issue_parameter_gathers();
    // The gather the first forward of layer `layer` of virtual stage v waits for, if any.
    std::optional<sim::TaskId> parameter_gather(int v, int layer) const;
    bool zero3() const { return zero3_; }
    // ZeRO-3: the gather of one layer's parameters on `stage` (the caller adds its prefetch window).
    sim::TaskId layer_gather(int stage, int mb, int layer, const LayerCost& cost);

    // Starts a pass that produces weight gradients; `last_of_chunk`: the last such pass of its
    // model chunk on this stage (the one whose gradients are complete).
    void begin_gradient_pass(bool last_of_chunk);
    // After the compute of one layer of that pass (`position` of `layers` in pass order).
    void layer_gradients(int stage, sim::TaskId compute, int mb, int layer, int position, int layers,
                         const LayerCost& cost);
    // After all passes: `last_gradient_pass` is the end of the stage's last gradient-producing pass.
    void finish(int stage, sim::TaskId last_gradient_pass);

private:
    sim::TaskGraph& graph_;
    const TrainingPlan& plan_;
    const StageMap& map_;
    const StepCosts& costs_;
    ProgramCoster& coster_;
    const std::vector<StageStreams>& streams_;
    const TaskStyle& style_;
    std::vector<std::vector<CommTask>>& carried_;
    bool zero3_, dp_sync_;
    std::vector<std::vector<sim::TaskId>> parameter_gathers_;  // per virtual stage, per layer
    std::vector<std::vector<sim::TaskId>> gradient_tasks_;     // per stage
    bool last_of_chunk_ = false;
    double bucket_ = 0, expert_bucket_ = 0;  // parameters whose gradients wait for the next bucket
    std::deque<CommMoves> moves_;            // of the buckets' tasks (stable addresses)

    // A task on the stage's dp stream, listed as carried (`moves` kept until the replay's end).
    sim::TaskId dp_task(int stage, double seconds, uint16_t tag, int mb, int layer, const CommMoves& moves);
    // A task moving one collective over the data-parallel group for `params` and over the expert
    // data-parallel group for `expert_params`, priced at `seconds`.
    sim::TaskId dp_task(int stage, double seconds, uint16_t tag, int mb, int layer, hardware::Collective op,
                        double params, double expert_params, double bytes_per_param);
    // One collective over the data-parallel group for `params` and over the expert data-parallel
    // group for `expert_params` (the two run back to back on the dp stream).
    double dp_collective(hardware::Collective op, double params, double expert_params, double bytes_per_param) const;
};

}  // namespace fathom::workloads
