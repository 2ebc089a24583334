// The parallel, training and stack keys of a training scenario (TrainingPlan), declared once: the
// parser, --set, `fathom keys` and the plan hash all read this table.
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "plans/length_keys.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::plans {
namespace {

using hardware::Dtype;
using workloads::ActivationOffload;
using workloads::GradDtype;
using workloads::MoeRouting;
using workloads::ParallelLayout;
using workloads::Recompute;
using workloads::SelectivePolicy;
using workloads::TrainingPlan;
using workloads::TrainingSettings;
using workloads::TrainingStack;
using namespace key_decl;

}  // namespace

// Declarative table: the parallel.*, training.* and stack.* keys, in reference order.
const std::vector<Key<TrainingPlan>>& training_plan_keys() {
    using P = TrainingPlan;
    static const std::vector<Key<P>> keys = finish<P>([] {
        std::vector<Key<P>> k = {
            {Decl("parallel.dp", KeyType::Integer, "data-parallel degree").range(1).by_default("GPUs / (tp x pp x cp)"),
             member<&P::layout, &ParallelLayout::dp>()},
            {Decl("parallel.tp", KeyType::Integer, "tensor-parallel degree").range(1),
             member<&P::layout, &ParallelLayout::tp>()},
            {Decl("parallel.pp", KeyType::Integer, "pipeline-parallel stages").range(1),
             member<&P::layout, &ParallelLayout::pp>()},
            {Decl("parallel.vp", KeyType::Integer, "model chunks (virtual stages) per pipeline rank").range(1),
             member<&P::layout, &ParallelLayout::vp>()},
            {Decl("parallel.cp", KeyType::Integer, "context-parallel degree (each sequence split over cp ranks)")
                 .range(1),
             member<&P::layout, &ParallelLayout::cp>()},
            {Decl("parallel.ep", KeyType::Integer,
                  "expert-parallel degree: the experts of each MoE layer spread over ep ranks of the tp x cp x dp "
                  "ranks of a stage")
                 .range(1),
             member<&P::layout, &ParallelLayout::ep>()},
            {Decl("parallel.etp", KeyType::Integer,
                  "expert tensor parallelism: 1, or tp (each expert split over the TP group)")
                 .range(1),
             member<&P::layout, &ParallelLayout::etp>()},
            {Decl("parallel.sequence_parallel", KeyType::Boolean,
                  "Megatron sequence parallelism with tp > 1 (norms, dropouts and residuals sharded over tp)"),
             member<&P::layout, &ParallelLayout::sequence_parallel>()},
            {Decl("training.seq_len", KeyType::Integer, "tokens per sequence").range(1).required(),
             member<&P::training, &TrainingSettings::seq_len>()},
            {Decl("training.global_batch_size", KeyType::Integer, "sequences per optimizer step").range(1).required(),
             member<&P::training, &TrainingSettings::global_batch>()},
            {Decl("training.micro_batch_size", KeyType::Integer, "sequences per micro-batch per data-parallel rank")
                 .range(1)
                 .required(),
             member<&P::training, &TrainingSettings::micro_batch>()},
            {Decl("training.zero_stage", KeyType::Integer,
                  "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters (FSDP)")
                 .range(0, 3),
             member<&P::training, &TrainingSettings::zero_stage>()},
            {Decl("training.recompute", KeyType::Choice,
                  "activation recomputation: selective (norms, activation function), full (whole layers)")
                 .choices_of<Recompute>(),
             member<&P::training, &TrainingSettings::recompute>()},
            {Decl("training.recompute_num_layers", KeyType::Integer,
                  "with recompute: full, recompute only the first N layers of each piece of the model (Megatron-Core "
                  "--recompute-method block --recompute-num-layers N); the others keep their activations")
                 .range(0)
                 .by_default("0: every layer"),
             member<&P::training, &TrainingSettings::recompute_num_layers>()},
            {Decl("training.schedule", KeyType::Choice, "pipeline schedule (`fathom list schedules`)")
                 .choices(registry_names(workloads::schedule_registry()))
                 .by_default(workloads::kDefaultScheduleRule),
             member<&P::training, &TrainingSettings::schedule>()},
            {Decl("training.layers_per_stage", KeyType::IntegerList,
                  "layers of each piece of the model, in model order, for uneven splits: pp x vp entries (dualpipe, "
                  "with a model "
                  "copy per direction: pp)")
                 .range(1)
                 .by_default("layers / (pp x vp) each"),
             member<&P::training, &TrainingSettings::layers_per_virtual_stage>()},
            {Decl("training.moe_zipf", KeyType::Number,
                  "routing skew: expert popularity ~ 1 / rank^s over randomly placed experts; the busiest "
                  "expert-parallel "
                  "rank sets the pace (0: balanced, what a balancing loss aims for)")
                 .range(0, 10),
             member<&P::training, &TrainingSettings::moe_routing, &MoeRouting::zipf>()},
            {Decl("training.moe_expert_loads", KeyType::IntegerList,
                  "measured tokens per expert (num_experts entries), experts placed contiguously over the EP ranks; "
                  "replaces moe_zipf")
                 .range(0)
                 .by_default("none"),
             member<&P::training, &TrainingSettings::moe_routing, &MoeRouting::expert_loads>()},
            {Decl("training.moe_capacity_factor", KeyType::Number,
                  "tokens an expert takes at most, x the mean per expert; the rest are dropped (0: dropless)")
                 .range(0, 1e6),
             member<&P::training, &TrainingSettings::moe_routing, &MoeRouting::capacity_factor>()},
            {Decl("training.lora_rank", KeyType::Integer,
                  "LoRA fine-tuning: adapters of this rank on every linear projection of the layers, base weights, "
                  "embedding and output layer frozen (models/llm/lora.h); 0: full training")
                 .range(0, 65536),
             member<&P::training, &TrainingSettings::lora_rank>()},
            {Decl("training.recompute_mla_up_proj", KeyType::Boolean,
                  "latent attention's up-projections (Q, K, V from the latents) are recomputed in the backward pass "
                  "instead "
                  "of kept (Megatron-Core --recompute-modules mla_up_proj; DeepSeek-V3)"),
             member<&P::training, &TrainingSettings::recompute_mla_up_proj>()},
            {Decl("training.recompute_moe", KeyType::Boolean,
                  "recompute each MoE block (router, all-to-alls, experts) from its input in the backward pass instead "
                  "of "
                  "keeping its activations (Megatron-Core --recompute-modules moe)"),
             member<&P::training, &TrainingSettings::recompute_moe>()},
            {Decl("stack.dtype", KeyType::Choice, "GEMM dtype (fp8: Transformer Engine recipes, bf16 around the GEMMs)")
                 .choices(plan_dtype_choices()),
             member<&P::stack, &TrainingStack::kernels, &models::KernelStack::gemm_dtype>()},
            {Decl("stack.grad_dtype", KeyType::Choice,
                  "main-gradient dtype (accumulation and data-parallel reduction); fp32-for-bf16: Megatron-LM's rule, "
                  "fp32 "
                  "with bf16 or fp8 training, the parameters' fp16 with fp16")
                 .choices_of<GradDtype>(),
             member<&P::stack, &TrainingStack::grad_dtype>()},
            {Decl("stack.flash_attention", KeyType::Boolean,
                  "fused flash attention; false: unfused with materialized scores"),
             member<&P::stack, &TrainingStack::kernels, &models::KernelStack::flash_attention>()},
            {Decl("stack.cp_comm", KeyType::Choice,
                  "context-parallel K/V exchange: p2p (ring, beside the attention steps), all_gather (beside the first "
                  "step), a2a (Ulysses all-to-all over heads)")
                 .choices_of<models::CpComm>(),
             member<&P::stack, &TrainingStack::cp_comm>()},
            {Decl("stack.attention_kernel", KeyType::Choice,
                  "flash-attention kernel class: fa3 (FlashAttention-3, cuDNN fused attention) or fa2 (flash-attn 2, "
                  "PyTorch SDPA's flash backend, Triton), slower on Hopper")
                 .choices_of<models::AttentionKernel>({models::AttentionKernel::Fa3, models::AttentionKernel::Fa2}),
             member<&P::stack, &TrainingStack::kernels, &models::KernelStack::attention_kernel>()},
            {Decl("stack.fused_elementwise", KeyType::Boolean,
                  "fused norms, activation and rotary kernels; false: eager PyTorch (no torch.compile), several "
                  "kernels each"),
             member<&P::stack, &TrainingStack::kernels, &models::KernelStack::fused_elementwise>()},
            {Decl("stack.tp_comm_overlap", KeyType::Boolean,
                  "TP collectives overlapped with GEMMs (userbuffers, async TP)"),
             member<&P::stack, &TrainingStack::tp_comm_overlap>()},
            {Decl("stack.selective_recompute", KeyType::Choice,
                  "what training.recompute: selective recomputes: norms_activations (Megatron-Core: norms and "
                  "activation "
                  "functions) or every_second_matmul (torchtitan's op-level policy: matmul and attention outputs kept "
                  "except "
                  "every second matmul of the layer, all other ops recomputed)")
                 .choices_of<SelectivePolicy>(),
             member<&P::stack, &TrainingStack::selective_policy>()},
            {Decl(
                 "stack.tp_overlap_contention", KeyType::Number,
                 "under TP overlap, the fraction of each hidden TP transfer's time its fused GEMM still loses (SMs and "
                 "bandwidth taken by the transfer, decomposed GEMM chunks); 0: hiding is free")
                 .range(0, 1),
             member<&P::stack, &TrainingStack::tp_overlap_contention>()},
            {Decl("stack.dp_comm_overlap", KeyType::Boolean,
                  "gradient reduction (ZeRO 0-2 buckets) overlapped with the backward pass; ZeRO-3 reduce-scatters "
                  "each layer as its backward ends either way"),
             member<&P::stack, &TrainingStack::dp_comm_overlap>()},
            {Decl("stack.pp_comm_overlap", KeyType::Boolean,
                  "pipeline sends run beside the stage's next compute; false: blocking sends (the stage waits)"),
             member<&P::stack, &TrainingStack::pp_comm_overlap>()},
            {Decl("stack.moe_dispatcher", KeyType::Choice,
                  "MoE token dispatcher: alltoall (every token-expert pair travels), deepep (a token once per "
                  "destination "
                  "rank in a node, once per destination node across nodes)")
                 .choices_of<models::MoeDispatcher>({models::MoeDispatcher::AllToAll, models::MoeDispatcher::DeepEp}),
             member<&P::stack, &TrainingStack::moe_dispatcher>()},
            {Decl("stack.activation_offload", KeyType::Choice,
                  "activations left for the backward pass: none (on the device), or ssd: written to the nodes' "
                  "SSDs (cluster.ssd) as the forward pass makes them and read back ahead of the backward pass "
                  "(SSDTrain), as much as the drives move within the stage's compute time")
                 .choices_of<ActivationOffload>(),
             member<&P::stack, &TrainingStack::activation_offload>()},
            {Decl("stack.ep_comm_overlap", KeyType::Boolean,
                  "MoE all-to-alls run beside another micro-batch's compute (Megatron-Core "
                  "--overlap-moe-expert-parallel-comm)"),
             member<&P::stack, &TrainingStack::ep_comm_overlap>()},
            {Decl("stack.cross_entropy_fusion", KeyType::Boolean,
                  "fused vocab-parallel cross-entropy (Megatron-LM --cross-entropy-loss-fusion): loss and gradient "
                  "from the "
                  "bf16 logits in place, no fp32 softmax copy"),
             member<&P::stack, &TrainingStack::kernels, &models::KernelStack::fused_cross_entropy>()},
            {Decl("stack.fp8_tp_all_gather", KeyType::Boolean,
                  "under an fp8 recipe, sequence-parallel all-gathers carry fp8 (activations forward, output gradients "
                  "backward), reduce-scatters bf16 (torchao Float8 tensor parallelism)"),
             member<&P::stack, &TrainingStack::kernels, &models::KernelStack::fp8_tp_all_gather>()},
            {Decl("stack.param_gather_overlap", KeyType::Boolean,
                  "ZeRO-1/2 parameter all-gather overlapped with the next forward"),
             member<&P::stack, &TrainingStack::param_gather_overlap>()},
            {Decl("stack.bucket_size", KeyType::Number, "gradient bucket, in parameters").range(1),
             member<&P::stack, &TrainingStack::bucket_params>()},
            {Decl(
                 "stack.runtime_reserved", KeyType::Quantity,
                 "device memory outside the model's tensors (CUDA context, NCCL buffers, allocator slack), with a unit")
                 .unit(sim::Dimension::Bytes)
                 .range(0),
             member<&P::stack, &TrainingStack::runtime_reserved>()},
        };
        // Packed documents: their lengths as a distribution (the traffic.prompt keys) and a seed.
        add_length_keys<&P::training, &TrainingSettings::documents>(k, "training.documents");
        k.push_back(
            {Decl("training.documents.seed", KeyType::Integer, "seed of the document-length draws").range(0, 9.2e18),
             member<&P::training, &TrainingSettings::documents_seed>()});
        return k;
    }());
    return keys;
}

void set_training_key(TrainingPlan& plan, const std::string& path, const KeyValue& value) {
    set_key(training_plan_keys(), plan, path, value, "training-plan");
}

std::vector<std::pair<std::string, KeyValue>> changed_training_keys(const TrainingPlan& base,
                                                                    const TrainingPlan& plan) {
    return key_decl::changed_keys(training_plan_keys(), base, plan);
}

KeyValue get_training_key(const TrainingPlan& plan, const std::string& path) {
    return get_key(training_plan_keys(), plan, path, "training-plan");
}

}  // namespace fathom::plans
