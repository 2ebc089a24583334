#include "workloads/training/step_costs.h"

#include "models/llm/dense_layer.h"

namespace fathom::workloads {

using hardware::Collective;
using models::GradKind;
using models::GroupKind;

models::LayerInputs microbatch_inputs(const TrainingPlan& p) {
    models::LayerInputs in;
    in.shard = p.layout.sharding();
    in.shard.cp_comm = p.stack.cp_comm;
    // Each context-parallel rank holds seq_len / cp queries of every sequence (two mirrored chunks,
    // load-balanced) and attends to the whole sequence.
    in.batch = models::TokenBatch::uniform(p.training.micro_batch, p.training.seq_len / p.layout.cp, p.training.seq_len);
    in.kernels = p.stack.kernels;
    return in;
}

StepCosts cost_training_step(const models::ModelSpec& m, const TrainingPlan& p, ProgramCoster& coster) {
    const models::LayerInputs in = microbatch_inputs(p);
    StepCosts c;

    const models::LayerProgram fwd = models::dense_layer_forward(m, in);
    const models::LayerProgram bwd = models::backward_program(fwd);
    const PassCost f = coster.cost(fwd);
    PassCost recompute;
    if (p.training.recompute == Recompute::Selective) recompute.compute = coster.cost(models::selective_recompute(fwd)).compute;
    if (p.training.recompute == Recompute::Full) recompute = f;
    auto with_recompute = [&recompute](PassCost b) { return b += recompute; };
    c.layer[pass_index(PassKind::Forward)] = f;
    c.layer[pass_index(PassKind::Backward)] = with_recompute(coster.cost(bwd));
    c.layer[pass_index(PassKind::BackwardInput)] = with_recompute(coster.cost(bwd.only({GradKind::Input})));
    c.layer[pass_index(PassKind::BackwardWeight)] = coster.cost(bwd.only({GradKind::Weight}));

    const models::LayerProgram emb_b = models::embedding_backward(m, in);
    c.embedding[pass_index(PassKind::Forward)] = coster.cost(models::embedding_forward(m, in));
    c.embedding[pass_index(PassKind::Backward)] = coster.cost(emb_b);
    c.embedding[pass_index(PassKind::BackwardWeight)] = coster.cost(emb_b);  // the table's gradient
    const models::LayerProgram head_b = models::head_backward(m, in);
    c.head[pass_index(PassKind::Forward)] = coster.cost(models::head_forward(m, in));
    c.head[pass_index(PassKind::Backward)] = coster.cost(head_b);
    c.head[pass_index(PassKind::BackwardInput)] = coster.cost(head_b.only({GradKind::Input}));
    c.head[pass_index(PassKind::BackwardWeight)] = coster.cost(head_b.only({GradKind::Weight}));

    if (p.layout.pp > 1) c.p2p = coster.collective(Collective::SendRecv, models::stage_boundary_bytes(m, in), GroupKind::pp);
    c.layer_params = m.layer_params() / p.layout.tp;
    if (p.training.zero_stage >= 3) {
        c.zero3_gather = coster.collective(Collective::AllGather, c.layer_params * 2.0, GroupKind::dp);
        c.zero3_reduce = coster.collective(Collective::ReduceScatter, c.layer_params * p.stack.grad_bytes, GroupKind::dp);
    }
    return c;
}

}  // namespace fathom::workloads
