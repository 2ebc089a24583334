#include "workloads/training/stage_map.h"

#include "sim/error.h"
#include "workloads/training/step_costs.h"

namespace fathom::workloads {

StageMap::StageMap(const models::ModelSpec& model, const TrainingPlan& plan, const PipelineSchedule& schedule)
    : model_(model),
      layout_(plan.layout),
      stages_(plan.layout.pp),
      chunks_(plan.layout.vp),
      tp_(plan.layout.tp),
      routes_(schedule.routes()),
      seq_len_(plan.training.seq_len) {
    const int V = stages_ * chunks_;
    vstage_.assign(static_cast<size_t>(V), -1);
    owner_.assign(static_cast<size_t>(V), -1);
    for (int s = 0; s < stages_; ++s)
        for (int c = 0; c < chunks_; ++c) {
            const int v = schedule.virtual_stage(s, c, stages_, chunks_);
            FATHOM_CHECK(v >= 0 && v < V && owner_[static_cast<size_t>(v)] < 0,
                         "schedule maps two chunks to one virtual stage");
            vstage_[static_cast<size_t>(s * chunks_ + c)] = v;
            owner_[static_cast<size_t>(v)] = s;
        }
    lora_layer_ = layer_rank_lora_params(model, plan);
    // The model's split into pieces (one per virtual stage of a route), repeated for every route.
    FATHOM_CHECK(routes_ >= 1 && V % routes_ == 0, "schedule routes do not divide the virtual stages");
    const int pieces = V / routes_;
    std::vector<int> split = plan.training.layers_per_virtual_stage;
    if (split.empty()) split.assign(static_cast<size_t>(pieces), static_cast<int>(model.layers / pieces));
    FATHOM_CHECK(static_cast<int>(split.size()) == pieces, "layer split does not match the virtual stages of a route");
    for (int v = 0; v < V; ++v) {
        const int piece = v % pieces;
        layers_.push_back(split[static_cast<size_t>(piece)]);
        first_.push_back(piece == 0 ? 0 : first_.back() + layers_[layers_.size() - 2]);
    }
}

double StageMap::stage_trained_params(int stage) const {
    return lora_layer_ > 0 ? lora_layer_ * stage_layers(stage) : stage_params(stage);
}

bool StageMap::holds_embedding(int stage) const {
    for (int r = 0; r < routes_; ++r)
        if (owner(route_begin(r)) == stage) return true;
    return false;
}

bool StageMap::holds_head(int stage) const {
    for (int r = 0; r < routes_; ++r)
        if (owner(route_begin(r) + pieces() - 1) == stage) return true;
    return false;
}

int StageMap::stage_layers(int stage) const {
    int n = 0;
    for (int c = 0; c < chunks_; ++c) n += layers(virtual_stage(stage, c));
    return n;
}

double StageMap::stage_params(int stage) const {
    double n = 0;
    for (int c = 0; c < chunks_; ++c) {
        const int v = virtual_stage(stage, c);
        for (int i = 0; i < layers(v); ++i) n += layer_rank_params(model_, layout_, is_moe(v, i));
    }
    if (holds_embedding(stage)) n += model_.embedding_params(seq_len_) / tp_;
    if (holds_head(stage)) {
        n += model_.output_params() / tp_;
        if (model_.tied_embeddings && !holds_embedding(stage))
            n += static_cast<double>(model_.vocab) * static_cast<double>(model_.hidden) / tp_;
    }
    return n;
}

}  // namespace fathom::workloads

namespace fathom::workloads {

double StageMap::stage_expert_params(int stage) const {
    double n = 0;
    for (int c = 0; c < chunks_; ++c) {
        const int v = virtual_stage(stage, c);
        for (int i = 0; i < layers(v); ++i) n += layer_rank_expert_params(model_, layout_, is_moe(v, i));
    }
    return n;
}

}  // namespace fathom::workloads
