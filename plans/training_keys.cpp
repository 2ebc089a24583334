// The parallel, training and stack keys of a training scenario (TrainingPlan), declared once: the
// parser, --set, `fathom keys` and the plan hash all read this table.
#include "plans/key_decl.h"
#include "plans/keys.h"
#include "plans/length_keys.h"
#include "sim/error.h"
#include "workloads/training/schedules/pipeline_schedule.h"

namespace fathom::plans {
namespace {

using workloads::TrainingPlan;
using namespace key_decl;

std::vector<std::string> schedule_names() {
    std::vector<std::string> out;
    for (const auto& e : workloads::schedule_registry().entries()) out.push_back(e.name);
    return out;
}

}  // namespace

const std::vector<Key<TrainingPlan>>& training_plan_keys() {
    using P = TrainingPlan;
    static const std::vector<Key<P>> keys = finish<P>([] {
        std::vector<Key<P>> k = {
            {Decl("parallel.dp", KeyType::Integer, "data-parallel degree").range(1).by_default("GPUs / (tp x pp x cp)"),
             [](P& p, const KeyValue& v) { p.layout.dp = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.dp}; }},
            {Decl("parallel.tp", KeyType::Integer, "tensor-parallel degree").range(1),
             [](P& p, const KeyValue& v) { p.layout.tp = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.tp}; }},
            {Decl("parallel.pp", KeyType::Integer, "pipeline-parallel stages").range(1),
             [](P& p, const KeyValue& v) { p.layout.pp = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.pp}; }},
            {Decl("parallel.vp", KeyType::Integer, "model chunks (virtual stages) per pipeline rank").range(1),
             [](P& p, const KeyValue& v) { p.layout.vp = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.vp}; }},
            {Decl("parallel.cp", KeyType::Integer, "context-parallel degree (each sequence split over cp ranks)")
                 .range(1),
             [](P& p, const KeyValue& v) { p.layout.cp = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.cp}; }},
            {Decl("parallel.ep", KeyType::Integer,
                  "expert-parallel degree: the experts of each MoE layer spread over ep ranks of the tp x cp x dp "
                  "ranks of a stage")
                 .range(1),
             [](P& p, const KeyValue& v) { p.layout.ep = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.ep}; }},
            {Decl("parallel.etp", KeyType::Integer,
                  "expert tensor parallelism: 1, or tp (each expert split over the TP group)")
                 .range(1),
             [](P& p, const KeyValue& v) { p.layout.etp = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.layout.etp}; }},
            {Decl("parallel.sequence_parallel", KeyType::Boolean,
                  "Megatron sequence parallelism with tp > 1 (norms, dropouts and residuals sharded over tp)"),
             [](P& p, const KeyValue& v) { p.layout.sequence_parallel = to_bool(v); },
             [](const P& p) -> KeyValue { return p.layout.sequence_parallel; }},
            {Decl("training.seq_len", KeyType::Integer, "tokens per sequence").range(1).required(),
             [](P& p, const KeyValue& v) { p.training.seq_len = to_int(v); },
             [](const P& p) -> KeyValue { return p.training.seq_len; }},
            {Decl("training.global_batch_size", KeyType::Integer, "sequences per optimizer step").range(1).required(),
             [](P& p, const KeyValue& v) { p.training.global_batch = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.training.global_batch}; }},
            {Decl("training.micro_batch_size", KeyType::Integer, "sequences per micro-batch per data-parallel rank")
                 .range(1)
                 .required(),
             [](P& p, const KeyValue& v) { p.training.micro_batch = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.training.micro_batch}; }},
            {Decl("training.zero_stage", KeyType::Integer,
                  "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters (FSDP)")
                 .range(0, 3),
             [](P& p, const KeyValue& v) { p.training.zero_stage = to_int32(v); },
             [](const P& p) -> KeyValue { return int64_t{p.training.zero_stage}; }},
            {Decl("training.recompute", KeyType::Choice,
                  "activation recomputation: selective (norms, activation function), full (whole layers)")
                 .choices({"none", "selective", "full"}),
             [](P& p, const KeyValue& v) {
                 const std::string& r = to_str(v);
                 p.training.recompute = r == "full"        ? workloads::Recompute::Full
                                        : r == "selective" ? workloads::Recompute::Selective
                                                           : workloads::Recompute::None;
             },
             [](const P& p) -> KeyValue { return std::string(workloads::recompute_name(p.training.recompute)); }},
            {Decl("training.schedule", KeyType::Choice, "pipeline schedule (`fathom list schedules`)")
                 .choices(schedule_names())
                 .by_default("interleaved-1f1b when vp > 1, else 1f1b"),
             [](P& p, const KeyValue& v) { p.training.schedule = to_str(v); },
             [](const P& p) -> KeyValue { return p.training.schedule; }},
            {Decl("training.layers_per_stage", KeyType::IntegerList,
                  "layers of each piece of the model, in model order, for uneven splits: pp x vp entries (dualpipe, "
                  "with a model "
                  "copy per direction: pp)")
                 .range(1)
                 .by_default("layers / (pp x vp) each"),
             [](P& p, const KeyValue& v) {
                 p.training.layers_per_virtual_stage.clear();
                 for (int64_t x : std::get<std::vector<int64_t>>(v))
                     p.training.layers_per_virtual_stage.push_back(static_cast<int>(x));
             },
             [](const P& p) -> KeyValue {
                 return std::vector<int64_t>(p.training.layers_per_virtual_stage.begin(),
                                             p.training.layers_per_virtual_stage.end());
             }},
            {Decl("training.moe_zipf", KeyType::Number,
                  "routing skew: expert popularity ~ 1 / rank^s over randomly placed experts; the busiest "
                  "expert-parallel "
                  "rank sets the pace (0: balanced, what a balancing loss aims for)")
                 .range(0, 10),
             [](P& p, const KeyValue& v) { p.training.moe_routing.zipf = to_double(v); },
             [](const P& p) -> KeyValue { return p.training.moe_routing.zipf; }},
            {Decl("training.moe_expert_loads", KeyType::IntegerList,
                  "measured tokens per expert (num_experts entries), experts placed contiguously over the EP ranks; "
                  "replaces moe_zipf")
                 .range(0)
                 .by_default("none"),
             [](P& p, const KeyValue& v) { p.training.moe_routing.expert_loads = std::get<std::vector<int64_t>>(v); },
             [](const P& p) -> KeyValue { return p.training.moe_routing.expert_loads; }},
            {Decl("training.moe_capacity_factor", KeyType::Number,
                  "tokens an expert takes at most, x the mean per expert; the rest are dropped (0: dropless)")
                 .range(0, 1e6),
             [](P& p, const KeyValue& v) { p.training.moe_routing.capacity_factor = to_double(v); },
             [](const P& p) -> KeyValue { return p.training.moe_routing.capacity_factor; }},
            {Decl("training.lora_rank", KeyType::Integer,
                  "LoRA fine-tuning: adapters of this rank on every linear projection of the layers, base weights, "
                  "embedding and output layer frozen (models/llm/lora.h); 0: full training")
                 .range(0, 65536),
             [](P& p, const KeyValue& v) { p.training.lora_rank = to_int32(v); },
             [](const P& p) -> KeyValue { return static_cast<int64_t>(p.training.lora_rank); }},
            {Decl("training.recompute_mla_up_proj", KeyType::Boolean,
                  "latent attention's up-projections (Q, K, V from the latents) are recomputed in the backward pass "
                  "instead "
                  "of kept (Megatron-Core --recompute-modules mla_up_proj; DeepSeek-V3)"),
             [](P& p, const KeyValue& v) { p.training.recompute_mla_up_proj = to_bool(v); },
             [](const P& p) -> KeyValue { return p.training.recompute_mla_up_proj; }},
            {Decl("training.recompute_moe", KeyType::Boolean,
                  "recompute each MoE block (router, all-to-alls, experts) from its input in the backward pass instead "
                  "of "
                  "keeping its activations (Megatron-Core --recompute-modules moe)"),
             [](P& p, const KeyValue& v) { p.training.recompute_moe = to_bool(v); },
             [](const P& p) -> KeyValue { return p.training.recompute_moe; }},
            {Decl("stack.dtype", KeyType::Choice, "GEMM dtype (fp8: Transformer Engine recipes, bf16 around the GEMMs)")
                 .choices({"bf16", "fp16", "fp8"}),
             [](P& p, const KeyValue& v) { p.stack.kernels.gemm_dtype = *hardware::parse_dtype(to_str(v)); },
             [](const P& p) -> KeyValue { return std::string(hardware::dtype_name(p.stack.kernels.gemm_dtype)); }},
            {Decl("stack.grad_dtype", KeyType::Choice,
                  "main-gradient dtype (accumulation and data-parallel reduction); fp32-for-bf16: Megatron-LM's rule, "
                  "fp32 "
                  "with bf16 or fp8 training, the parameters' fp16 with fp16")
                 .choices({"fp32", "bf16", "fp32-for-bf16"}),
             [](P& p, const KeyValue& v) {
                 const std::string d = to_str(v);
                 p.stack.grad_dtype = d == "bf16"            ? workloads::GradDtype::Bf16
                                      : d == "fp32-for-bf16" ? workloads::GradDtype::Fp32ForBf16
                                                             : workloads::GradDtype::Fp32;
             },
             [](const P& p) -> KeyValue {
                 switch (p.stack.grad_dtype) {
                     case workloads::GradDtype::Bf16: return std::string("bf16");
                     case workloads::GradDtype::Fp32ForBf16: return std::string("fp32-for-bf16");
                     case workloads::GradDtype::Fp32: break;
                 }
                 return std::string("fp32");
             }},
            {Decl("stack.flash_attention", KeyType::Boolean,
                  "fused flash attention; false: unfused with materialized scores"),
             [](P& p, const KeyValue& v) { p.stack.kernels.flash_attention = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.kernels.flash_attention; }},
            {Decl("stack.cp_comm", KeyType::Choice,
                  "context-parallel K/V exchange: p2p (ring, beside the attention steps), all_gather (beside the first "
                  "step), a2a (Ulysses all-to-all over heads)")
                 .choices({"p2p", "all_gather", "a2a"}),
             [](P& p, const KeyValue& v) {
                 for (models::CpComm c : {models::CpComm::P2p, models::CpComm::AllGather, models::CpComm::A2a})
                     if (to_str(v) == models::cp_comm_name(c)) p.stack.cp_comm = c;
             },
             [](const P& p) -> KeyValue { return std::string(models::cp_comm_name(p.stack.cp_comm)); }},
            {Decl("stack.attention_kernel", KeyType::Choice,
                  "flash-attention kernel class: fa3 (FlashAttention-3, cuDNN fused attention) or fa2 (flash-attn 2, "
                  "PyTorch SDPA's flash backend, Triton), slower on Hopper")
                 .choices({"fa3", "fa2"}),
             [](P& p, const KeyValue& v) {
                 p.stack.kernels.attention_kernel =
                     to_str(v) == "fa2" ? models::AttentionKernel::Fa2 : models::AttentionKernel::Fa3;
             },
             [](const P& p) -> KeyValue {
                 return std::string(p.stack.kernels.attention_kernel == models::AttentionKernel::Fa2 ? "fa2" : "fa3");
             }},
            {Decl("stack.fused_elementwise", KeyType::Boolean,
                  "fused norms, activation and rotary kernels; false: eager PyTorch (no torch.compile), several "
                  "kernels each"),
             [](P& p, const KeyValue& v) { p.stack.kernels.fused_elementwise = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.kernels.fused_elementwise; }},
            {Decl("stack.tp_comm_overlap", KeyType::Boolean,
                  "TP collectives overlapped with GEMMs (userbuffers, async TP)"),
             [](P& p, const KeyValue& v) { p.stack.tp_comm_overlap = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.tp_comm_overlap; }},
            {Decl("stack.selective_recompute", KeyType::Choice,
                  "what training.recompute: selective recomputes: norms_activations (Megatron-Core: norms and "
                  "activation "
                  "functions) or every_second_matmul (torchtitan's op-level policy: matmul and attention outputs kept "
                  "except "
                  "every second matmul of the layer, all other ops recomputed)")
                 .choices({"norms_activations", "every_second_matmul"}),
             [](P& p, const KeyValue& v) {
                 p.stack.selective_policy = to_str(v) == "every_second_matmul"
                                                ? workloads::SelectivePolicy::EverySecondMatmul
                                                : workloads::SelectivePolicy::NormsActivations;
             },
             [](const P& p) -> KeyValue {
                 return std::string(p.stack.selective_policy == workloads::SelectivePolicy::EverySecondMatmul
                                        ? "every_second_matmul"
                                        : "norms_activations");
             }},
            {Decl(
                 "stack.tp_overlap_contention", KeyType::Number,
                 "under TP overlap, the fraction of each hidden TP transfer's time its fused GEMM still loses (SMs and "
                 "bandwidth taken by the transfer, decomposed GEMM chunks); 0: hiding is free")
                 .range(0, 1),
             [](P& p, const KeyValue& v) { p.stack.tp_overlap_contention = to_double(v); },
             [](const P& p) -> KeyValue { return p.stack.tp_overlap_contention; }},
            {Decl("stack.dp_comm_overlap", KeyType::Boolean,
                  "gradient reduction (ZeRO 0-2 buckets) overlapped with the backward pass; ZeRO-3 reduce-scatters "
                  "each layer as its backward ends either way"),
             [](P& p, const KeyValue& v) { p.stack.dp_comm_overlap = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.dp_comm_overlap; }},
            {Decl("stack.pp_comm_overlap", KeyType::Boolean,
                  "pipeline sends run beside the stage's next compute; false: blocking sends (the stage waits)"),
             [](P& p, const KeyValue& v) { p.stack.pp_comm_overlap = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.pp_comm_overlap; }},
            {Decl("stack.moe_dispatcher", KeyType::Choice,
                  "MoE token dispatcher: alltoall (every token-expert pair travels), deepep (a token once per "
                  "destination "
                  "rank in a node, once per destination node across nodes)")
                 .choices({"alltoall", "deepep"}),
             [](P& p, const KeyValue& v) {
                 p.stack.moe_dispatcher =
                     to_str(v) == "deepep" ? models::MoeDispatcher::DeepEp : models::MoeDispatcher::AllToAll;
             },
             [](const P& p) -> KeyValue { return std::string(models::moe_dispatcher_name(p.stack.moe_dispatcher)); }},
            {Decl("stack.ep_comm_overlap", KeyType::Boolean,
                  "MoE all-to-alls run beside another micro-batch's compute (Megatron-Core "
                  "--overlap-moe-expert-parallel-comm)"),
             [](P& p, const KeyValue& v) { p.stack.ep_comm_overlap = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.ep_comm_overlap; }},
            {Decl("stack.cross_entropy_fusion", KeyType::Boolean,
                  "fused vocab-parallel cross-entropy (Megatron-LM --cross-entropy-loss-fusion): loss and gradient "
                  "from the "
                  "bf16 logits in place, no fp32 softmax copy"),
             [](P& p, const KeyValue& v) { p.stack.kernels.fused_cross_entropy = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.kernels.fused_cross_entropy; }},
            {Decl("stack.fp8_tp_all_gather", KeyType::Boolean,
                  "under an fp8 recipe, sequence-parallel all-gathers carry fp8 (activations forward, output gradients "
                  "backward), reduce-scatters bf16 (torchao Float8 tensor parallelism)"),
             [](P& p, const KeyValue& v) { p.stack.kernels.fp8_tp_all_gather = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.kernels.fp8_tp_all_gather; }},
            {Decl("stack.param_gather_overlap", KeyType::Boolean,
                  "ZeRO-1/2 parameter all-gather overlapped with the next forward"),
             [](P& p, const KeyValue& v) { p.stack.param_gather_overlap = to_bool(v); },
             [](const P& p) -> KeyValue { return p.stack.param_gather_overlap; }},
            {Decl("stack.bucket_size", KeyType::Number, "gradient bucket, in parameters").range(1),
             [](P& p, const KeyValue& v) { p.stack.bucket_params = to_double(v); },
             [](const P& p) -> KeyValue { return p.stack.bucket_params; }},
            {Decl(
                 "stack.runtime_reserved", KeyType::Quantity,
                 "device memory outside the model's tensors (CUDA context, NCCL buffers, allocator slack), with a unit")
                 .unit(sim::Dimension::Bytes)
                 .range(0),
             [](P& p, const KeyValue& v) { p.stack.runtime_reserved = to_double(v); },
             [](const P& p) -> KeyValue { return p.stack.runtime_reserved; }},
        };
        // Packed documents: their lengths as a distribution (the traffic.prompt keys) and a seed.
        FATHOM_LENGTH_KEYS(k, P, "training.documents", p.training.documents)
        k.push_back(
            {Decl("training.documents.seed", KeyType::Integer, "seed of the document-length draws").range(0, 9.2e18),
             [](P& p, const KeyValue& v) { p.training.documents_seed = static_cast<uint64_t>(to_int(v)); },
             [](const P& p) -> KeyValue { return static_cast<int64_t>(p.training.documents_seed); }});
        return k;
    }());
    return keys;
}

void set_training_key(TrainingPlan& plan, const std::string& path, const KeyValue& value) {
    for (const auto& k : training_plan_keys()) {
        if (k.info.path != path) continue;
        const std::string why = check_value(k.info, value);
        if (!why.empty()) throw sim::InputError(why, "", 0, path);
        k.set(plan, value);
        return;
    }
    throw sim::InputError("unknown training-plan key", "", 0, path);
}

KeyValue get_training_key(const TrainingPlan& plan, const std::string& path) {
    for (const auto& k : training_plan_keys())
        if (k.info.path == path) return k.get(plan);
    throw sim::InputError("unknown training-plan key", "", 0, path);
}

}  // namespace fathom::plans
