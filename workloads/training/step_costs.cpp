#include "workloads/training/step_costs.h"

#include "models/llm/dense_layer.h"
#include "models/llm/lora.h"
#include "models/llm/moe_layer.h"

namespace fathom::workloads {

using hardware::Collective;
using models::GradKind;
using models::GroupKind;

models::LayerInputs microbatch_inputs(const models::ModelSpec& m, const TrainingPlan& p) {
    models::LayerInputs in;
    in.shard = p.layout.sharding();
    in.shard.cp_comm = p.stack.cp_comm;
    in.shard.dispatcher = p.stack.moe_dispatcher;
    // Each context-parallel rank holds seq_len / cp queries of every sequence (two mirrored chunks,
    // load-balanced) and attends to the whole sequence.
    in.batch =
        models::TokenBatch::uniform(p.training.micro_batch, p.training.seq_len / p.layout.cp, p.training.seq_len);
    in.kernels = p.stack.kernels;
    // Training stacks run a rank's experts as one grouped GEMM (Megatron-Core's TEGroupedLinear and
    // grouped_gemm, torchtitan's torch._grouped_mm), not as dense GEMMs of each expert's rows.
    if (in.kernels.expert_gemm_kernel == models::GemmKernel::Library)
        in.kernels.expert_gemm_kernel = models::GemmKernel::Grouped;
    in.routing.busiest_rank_load = busiest_rank_load(m, p.layout.ep, p.training.moe_routing);
    return in;
}

namespace {

// `recomputed_block`: a part of the layer recomputed whole in the backward (with its collectives),
// whose ops selective recomputation then does not count again.
LayerCost cost_layer(const models::ModelSpec& m, const models::LayerProgram& fwd, const TrainingPlan& p,
                     ProgramCoster& coster, double params, double expert_params,
                     const models::LayerProgram* recomputed_block = nullptr) {
    LayerCost c;
    // Under LoRA only the adapters are trained: their gradients are reduced, while ZeRO-3 still
    // gathers the frozen weights.
    const double trained = p.training.lora_rank > 0 ? models::lora_params(fwd, p.training.lora_rank) : params;
    const models::LayerProgram bwd = models::backward_program(fwd);
    const PassCost f = coster.cost(fwd);
    PassCost recompute;
    if (p.training.recompute == Recompute::Selective) {
        auto selective = [&](const models::LayerProgram& prog) {
            return p.stack.selective_policy == SelectivePolicy::EverySecondMatmul
                       ? models::every_second_matmul_recompute(prog, m)
                       : models::selective_recompute(prog);
        };
        recompute.compute = coster.cost(selective(fwd)).compute;
        if (recomputed_block) recompute.compute -= coster.cost(selective(*recomputed_block)).compute;
    }
    if (p.training.recompute != Recompute::Full && recomputed_block) recompute += coster.cost(*recomputed_block);
    // MLA up-projections recomputed from the kept latents (their GEMMs and the rotary embedding).
    if (p.training.recompute != Recompute::Full && p.training.recompute_mla_up_proj)
        recompute.compute += coster.cost(models::mla_up_projection_recompute(fwd)).compute;
    if (p.training.recompute == Recompute::Full) recompute = f;
    auto with_recompute = [&recompute](PassCost b) { return b += recompute; };
    c.pass[pass_index(PassKind::Forward)] = f;
    c.pass[pass_index(PassKind::Backward)] = with_recompute(coster.cost(bwd));
    c.pass[pass_index(PassKind::BackwardInput)] = with_recompute(coster.cost(bwd.only({GradKind::Input})));
    c.pass[pass_index(PassKind::BackwardWeight)] = coster.cost(bwd.only({GradKind::Weight}));
    for (size_t k = 0; k < c.pass.size(); ++k) c.placed[k] = c.pass[k].placed();
    c.params = trained;
    c.expert_params = expert_params;
    if (p.training.zero_stage >= 3) {
        const double grad = p.stack.main_grad_bytes();
        c.zero3_gather = coster.collective(Collective::AllGather, params * 2.0, GroupKind::dp);
        c.zero3_reduce = coster.collective(Collective::ReduceScatter, trained * grad, GroupKind::dp);
        c.zero3_gather_moves = {{Collective::AllGather, params * 2.0, GroupKind::dp}};
        c.zero3_reduce_moves = {{Collective::ReduceScatter, trained * grad, GroupKind::dp}};
        if (expert_params > 0) {
            c.zero3_gather += coster.collective(Collective::AllGather, expert_params * 2.0, GroupKind::edp);
            c.zero3_reduce += coster.collective(Collective::ReduceScatter, expert_params * grad, GroupKind::edp);
            c.zero3_gather_moves.push_back({Collective::AllGather, expert_params * 2.0, GroupKind::edp});
            c.zero3_reduce_moves.push_back({Collective::ReduceScatter, expert_params * grad, GroupKind::edp});
        }
    }
    return c;
}

}  // namespace

double layer_rank_params(const models::ModelSpec& m, const ParallelLayout& l, bool moe_layer) {
    const double all = moe_layer ? m.moe_layer_nonexpert_params() : m.layer_params();
    const double replicated = m.replicated_params(moe_layer);
    return (all - replicated) / l.tp + replicated;
}

double layer_rank_expert_params(const models::ModelSpec& m, const ParallelLayout& l, bool moe_layer) {
    if (!moe_layer) return 0.0;
    return static_cast<double>(m.moe.num_experts / l.ep) * m.expert_params() / l.etp;
}

double layer_rank_lora_params(const models::ModelSpec& m, const TrainingPlan& p) {
    if (p.training.lora_rank <= 0) return 0.0;
    return models::lora_params(models::dense_layer_forward(m, microbatch_inputs(m, p)), p.training.lora_rank);
}

double trained_params(const models::ModelSpec& m, const TrainingPlan& p) {
    if (p.training.lora_rank <= 0) return m.total_params(p.training.seq_len);
    // The adapters of the whole model: one layer's at tp 1 (unsharded shapes), times the layers.
    models::LayerInputs one;
    one.batch = models::TokenBatch::uniform(1, p.training.seq_len, p.training.seq_len);
    return models::lora_params(models::dense_layer_forward(m, one), p.training.lora_rank) *
           static_cast<double>(m.layers);
}

double training_model_flops_per_token(const models::ModelSpec& m, const TrainingPlan& p, bool causal) {
    const double forward = m.forward_flops_per_token(p.training.seq_len, causal);
    if (p.training.lora_rank <= 0) return 3.0 * forward;
    return 2.0 * forward + 6.0 * trained_params(m, p);
}

StepCosts cost_training_step(const models::ModelSpec& m, const TrainingPlan& p, ProgramCoster& coster) {
    models::LayerInputs in = microbatch_inputs(m, p);
    const hardware::GroupLayout ep_layout = coster.group_layout(GroupKind::ep);
    in.shard.ep_ranks_per_node = ep_layout.ranks_per_node;
    in.shard.ep_nodes = ep_layout.nodes;
    StepCosts c;

    const int lora = p.training.lora_rank;
    auto cost_layers = [&](const TrainingPlan& q, LayerCost& dense, LayerCost& moe) {
        if (m.moe_layers() < m.layers) {  // a model whose every layer is MoE has no dense MLP to price
            const models::LayerProgram fwd = models::dense_layer_forward(m, in);
            dense = cost_layer(m, lora > 0 ? models::with_lora(fwd, lora) : fwd, q, coster,
                               layer_rank_params(m, p.layout, false), 0.0);
        }
        if (m.moe_layers() > 0) {
            const models::LayerProgram block = models::moe_block_forward(m, in);
            moe = cost_layer(m, models::moe_layer_forward(m, in), q, coster, layer_rank_params(m, p.layout, true),
                             layer_rank_expert_params(m, p.layout, true), q.training.recompute_moe ? &block : nullptr);
        }
    };
    cost_layers(p, c.dense, c.moe);
    if (p.training.recompute == Recompute::Full && p.training.recompute_num_layers > 0) {
        TrainingPlan kept = p;  // the layers past the first N of a piece: no recomputation
        kept.training.recompute = Recompute::None;
        c.dense_kept.emplace();
        c.moe_kept.emplace();
        cost_layers(kept, *c.dense_kept, *c.moe_kept);
    }

    // Under LoRA the embedding and output layer are frozen: no weight gradients.
    auto train = [lora](const models::LayerProgram& prog) { return lora > 0 ? models::frozen(prog) : prog; };
    const models::LayerProgram emb_b = train(models::embedding_backward(m, in));
    c.embedding[pass_index(PassKind::Forward)] = coster.cost(models::embedding_forward(m, in));
    c.embedding[pass_index(PassKind::Backward)] = coster.cost(emb_b);
    c.embedding[pass_index(PassKind::BackwardWeight)] = coster.cost(emb_b);  // the table's gradient
    const models::LayerProgram head_b = models::backward_program(train(models::head_forward(m, in)));
    c.head[pass_index(PassKind::Forward)] = coster.cost(models::head_forward(m, in));
    c.head[pass_index(PassKind::Backward)] = coster.cost(head_b);
    c.head[pass_index(PassKind::BackwardInput)] = coster.cost(head_b.only({GradKind::Input}));
    c.head[pass_index(PassKind::BackwardWeight)] = coster.cost(head_b.only({GradKind::Weight}));

    if (p.layout.pp > 1) {
        c.p2p_bytes = models::stage_boundary_bytes(m, in);
        c.p2p = coster.collective(Collective::SendRecv, c.p2p_bytes, GroupKind::pp);
        c.p2p_moves = {{Collective::SendRecv, c.p2p_bytes, GroupKind::pp}};
    }
    return c;
}

}  // namespace fathom::workloads
