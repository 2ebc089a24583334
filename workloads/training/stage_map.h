#pragma once
// Where a training plan puts the model: which pipeline stage and chunk hold each virtual stage (by
// the schedule's mapping), how many layers each virtual stage has, and how many parameters one
// rank of each stage holds. A schedule with several routes (DualPipe) keeps one copy of the model
// per route: the model is split into V / routes pieces, and virtual stage v holds piece v mod that.
#include "models/llm/model_spec.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/training_plan.h"

#include <vector>

namespace fathom::workloads {

class StageMap {
public:
    // `plan` must have passed plans::check_training_plan.
    StageMap(const models::ModelSpec& model, const TrainingPlan& plan, const PipelineSchedule& schedule);

    int stages() const { return stages_; }
    int chunks() const { return chunks_; }
    int virtual_stages() const { return stages_ * chunks_; }
    int routes() const { return routes_; }
    int pieces() const { return virtual_stages() / routes_; }  // virtual stages per route
    int route_begin(int route) const { return route * pieces(); }
    // The route micro-batch `mb` of `microbatches` travels (the first half of them route 0, ...).
    int route_of(int mb, int microbatches) const { return mb / (microbatches / routes_); }
    bool route_start(int v) const { return v % pieces() == 0; }
    bool route_end(int v) const { return v % pieces() == pieces() - 1; }
    int virtual_stage(int stage, int chunk) const { return vstage_[static_cast<size_t>(stage * chunks_ + chunk)]; }
    int owner(int v) const { return owner_[static_cast<size_t>(v)]; }  // the stage holding virtual stage v
    int layers(int v) const { return layers_[static_cast<size_t>(v)]; }
    int stage_layers(int stage) const;
    // The model's index of the first layer of virtual stage v (layers are in model order).
    int first_layer(int v) const { return first_[static_cast<size_t>(v)]; }
    // Whether local layer `i` of virtual stage v is a mixture-of-experts layer.
    bool is_moe(int v, int i) const { return model_.is_moe_layer(first_layer(v) + i); }
    // Parameters one rank of `stage` holds outside routed experts: its layers, the embedding with
    // the first virtual stage, the output layer with the last (plus a copy of a tied embedding when
    // the two sit on different stages), all divided by tp; and of its layers' routed experts (E /
    // ep experts per layer, divided by etp), which are reduced over the expert data-parallel group.
    double stage_params(int stage) const;
    double stage_expert_params(int stage) const;
    // The parameters of a stage that are trained (gradients, optimizer states, the optimizer step):
    // all of them, or under LoRA its layers' adapters only.
    double stage_trained_params(int stage) const;
    double stage_trained_expert_params(int stage) const { return lora_layer_ > 0 ? 0.0 : stage_expert_params(stage); }
    // Whether a stage holds the embedding (the first virtual stage of a route) or the output layer
    // (the last).
    bool holds_embedding(int stage) const;
    bool holds_head(int stage) const;

private:
    const models::ModelSpec& model_;
    ParallelLayout layout_;
    int stages_, chunks_, tp_, routes_;
    int64_t seq_len_;
    double lora_layer_ = 0;  // LoRA adapter parameters per layer and rank (0: full training)
    std::vector<int> vstage_, owner_, layers_, first_;
};

}  // namespace fathom::workloads
