#include "workloads/serving/draft_cost.h"

namespace fathom::workloads::serving {

DraftCoster::DraftCoster(const models::ModelSpec& target, const SpeculativeSettings& spec, const PoolLayout& pool,
                         const models::KernelStack& kernels, const models::CostModel& cost,
                         const hardware::NetworkModel& network)
    : steps_(spec.tokens),
      overhead_s_(spec.enabled() ? spec.iteration_overhead_s + spec.tokens * spec.step_overhead_s : 0.0) {
    if (!spec.enabled() || spec.method == SpecMethod::Ngram) return;
    if (spec.method == SpecMethod::Draft) {
        model_ = std::make_unique<models::ModelSpec>(*spec.draft);
    } else {
        // One decoder layer of the target's shape (the first: dense where the target's first layers
        // are) and the target's head.
        model_ = std::make_unique<models::ModelSpec>(target);
        model_->layers = 1;
    }
    PoolLayout one = pool;
    one.pp = 1;  // the drafter runs on the replica's last stage, whole
    // Its launches ride the target's iteration (CUDA graphs): no CPU time of its own.
    coster_ = std::make_unique<IterationCoster>(*model_, one, kernels, EngineSettings{}, cost, network);
}

double DraftCoster::seconds(int64_t decodes, int64_t decode_kv) {
    if (decodes == 0) return 0;
    if (!coster_) return overhead_s_;
    IterationShape shape;
    shape.decodes = decodes;
    shape.decode_kv = decode_kv;
    shape.samples = decodes;
    shape.sequences = decodes;
    return overhead_s_ + static_cast<double>(steps_) * coster_->seconds(shape).total();
}

}  // namespace fathom::workloads::serving
