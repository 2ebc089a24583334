#include "workloads/training/training_memory.h"

#include "models/memory/activation_memory.h"
#include "workloads/training/stage_map.h"
#include "workloads/training/step_costs.h"

#include <algorithm>

namespace fathom::workloads {

namespace {

// What one layer of each kind keeps for the backward pass, and the parts of a stage's transient
// memory that do not depend on the stage.
struct LayerBytes {
    double mla_up = 0;      // recomputed MLA up-projections: Q, K, V back for one layer at a time
    double kept_dense = 0;  // activations a dense layer keeps
    double kept_moe = 0;    // ... and a MoE layer
    // Under full recomputation of the first N layers of a piece only: what the others keep.
    double kept_dense_unrecomputed = 0, kept_moe_unrecomputed = 0;
    double full_layer = 0;  // the largest layer's full activations (full recomputation brings them back)
    double gathered = 0;    // the largest layer's parameters on this rank (ZeRO-3 gathers them)
    double tokens = 0;      // tokens of one micro-batch on this rank
};

LayerBytes layer_bytes(const models::ModelSpec& m, const TrainingPlan& p, const models::LayerInputs& in) {
    const bool has_moe = m.moe_layers() > 0;
    const Recompute rc = p.training.recompute;
    LayerBytes b;
    b.mla_up = p.training.recompute_mla_up_proj && rc != Recompute::Full ? models::mla_up_projection_bytes(m, in) : 0.0;
    auto sac_dropped = [&](bool moe) {
        return p.stack.selective_policy == SelectivePolicy::EverySecondMatmul
                   ? models::every_second_matmul_dropped_bytes(m, in, moe)
                   : 0.0;
    };
    auto kept = [&](bool moe) {
        if (moe && p.training.recompute_moe && rc != Recompute::Full)
            return models::moe_recomputed_layer_bytes(m, in, rc == Recompute::Selective) - b.mla_up;
        return rc == Recompute::Full ? models::layer_input_bytes(m, in)
               : rc == Recompute::Selective
                   ? models::layer_selective_activation_bytes(m, in, moe) - b.mla_up - sac_dropped(moe)
                   : models::layer_activation_bytes(m, in, moe) - b.mla_up;
    };
    b.kept_dense = kept(false);
    b.kept_moe = has_moe ? kept(true) : 0.0;
    b.kept_dense_unrecomputed = models::layer_activation_bytes(m, in, false) - b.mla_up;
    b.kept_moe_unrecomputed = has_moe ? models::layer_activation_bytes(m, in, true) - b.mla_up : 0.0;
    b.full_layer =
        std::max(models::layer_activation_bytes(m, in), has_moe ? models::layer_activation_bytes(m, in, true) : 0.0);
    b.gathered =
        std::max(layer_rank_params(m, p.layout, false),
                 has_moe ? layer_rank_params(m, p.layout, true) + layer_rank_expert_params(m, p.layout, true) : 0.0);
    b.tokens = static_cast<double>(in.batch.tokens());
    return b;
}

// The largest short-lived buffer of a stage's backward pass.
double stage_transient(const models::ModelSpec& m, const TrainingPlan& p, const models::LayerInputs& in,
                       const LayerBytes& b, bool holds_head) {
    const Recompute rc = p.training.recompute;
    double transient = rc == Recompute::Full ? b.full_layer : b.mla_up;
    // A recomputed MoE block brings its activations back during its layer's backward.
    if (m.moe_layers() > 0 && p.training.recompute_moe && rc != Recompute::Full)
        transient = std::max(transient, models::layer_activation_bytes(m, in, true) -
                                            models::moe_recomputed_layer_bytes(m, in, rc == Recompute::Selective));
    if (holds_head) {
        // Logits in bf16 plus the fp32 softmax of the loss, one micro-batch; a fused loss works
        // on the logits in place.
        const double softmax = p.stack.kernels.fused_cross_entropy ? 0.0 : 4.0;
        transient = std::max(transient, b.tokens * static_cast<double>(m.vocab / p.layout.tp) * (2.0 + softmax));
    }
    return transient;
}

// Activation offload (the header): the bytes of a stage's activations held off the device at its
// peak, and the fraction f of the offloadable ones that go.
struct Offload {
    double bytes = 0, fraction = 0;
};
Offload offload(const hardware::ClusterSpec& c, const TrainingPlan& p, double per_chunk, int peak_chunks,
                int chunk_layers, const double* compute_s) {
    if (p.stack.activation_offload != ActivationOffload::Ssd || !c.ssd || chunk_layers <= 0) return {};
    const double kept = std::min(1.0, 2.0 / chunk_layers);  // two layers of one chunk stay
    Offload o;
    o.fraction = 1;
    if (compute_s) {
        const double pcie = c.pcie.achievable_bandwidth();
        const double share = static_cast<double>(c.ssds_per_node) / c.gpus_per_node;
        const double write = std::min(pcie, c.ssd->write_bandwidth * share);
        const double read = std::min(pcie, c.ssd->read_bandwidth * share);
        const double per_step = per_chunk * (1 - kept) * p.microbatches() * p.layout.vp;
        if (per_step > 0) o.fraction = std::min(1.0, *compute_s / (per_step * (1 / write + 1 / read)));
    }
    o.bytes = o.fraction * std::max(0.0, per_chunk * peak_chunks - per_chunk * kept);
    return o;
}

}  // namespace

TrainingMemory estimate_training_memory(const models::ModelSpec& m, const hardware::ClusterSpec& cluster,
                                        const TrainingPlan& p, const PipelineSchedule* schedule,
                                        const std::vector<double>* stage_compute_s) {
    std::unique_ptr<PipelineSchedule> owned;
    if (!schedule) {
        owned = schedule_registry().get(p.training.schedule).factory();
        schedule = owned.get();
    }
    const StageMap map(m, p, *schedule);
    const models::LayerInputs in = microbatch_inputs(m, p);
    const LayerBytes b = layer_bytes(m, p, in);

    TrainingMemory out;
    out.capacity_bytes = cluster.accelerator.memory_capacity;
    for (int st = 0; st < map.stages(); ++st) {
        StageMemory sm;
        sm.layers = map.stage_layers(st);
        sm.peak_in_flight = peak_in_flight(schedule->order(st, map.stages(), map.chunks(), p.microbatches()));
        models::MemoryInputs mi;
        mi.params = map.stage_params(st);
        mi.dp = p.layout.dp * p.layout.cp;
        mi.expert_params = map.stage_expert_params(st);
        if (p.training.lora_rank > 0) {
            mi.trained_params = map.stage_trained_params(st);
            mi.trained_expert_params = map.stage_trained_expert_params(st);
        }
        mi.expert_dp = p.layout.group(models::GroupKind::edp).size;
        mi.zero_stage = p.training.zero_stage;
        // bf16 weights; under fp8 the fp8 copy of a layer's weights is cast per use (transient).
        mi.weight_bytes = 2;
        mi.grad_bytes = p.stack.main_grad_bytes();
        mi.gathered_params = 2 * b.gathered;
        // Activations per micro-batch chunk: the mean chunk's layers (in_flight counts chunks).
        double stage_kept = 0;
        for (int c = 0; c < map.chunks(); ++c) {
            const int v = map.virtual_stage(st, c);
            for (int i = 0; i < map.layers(v); ++i) {
                const bool recomputed = p.training.layer_recomputed(i);
                stage_kept += map.is_moe(v, i) ? (recomputed ? b.kept_moe : b.kept_moe_unrecomputed)
                                               : (recomputed ? b.kept_dense : b.kept_dense_unrecomputed);
            }
        }
        mi.activation_per_microbatch = stage_kept / p.layout.vp;
        mi.in_flight = sm.peak_in_flight;
        const Offload off =
            offload(cluster, p, mi.activation_per_microbatch, sm.peak_in_flight, sm.layers / p.layout.vp,
                    stage_compute_s ? &(*stage_compute_s)[static_cast<size_t>(st)] : nullptr);
        mi.activations_offloaded = off.bytes;
        sm.offloaded = off.fraction;
        mi.transient = stage_transient(m, p, in, b, map.holds_head(st));
        mi.runtime_reserved = p.stack.runtime_reserved;
        sm.memory = models::estimate_memory(mi);
        out.peak_bytes = std::max(out.peak_bytes, sm.memory.total());
        out.stages.push_back(sm);
    }
    out.out_of_memory = out.peak_bytes > out.capacity_bytes;
    return out;
}

}  // namespace fathom::workloads
