#pragma once
// Layer programs: what one layer (or the input embedding, or the output head) does in one pass on
// one rank, as an ordered list of steps. A step is either a compute op (models/ops/op.h, with its
// typed role) or a collective the layer implies, {collective, bytes, group kind}, on the stream of
// that group kind. All knowledge of which collectives a layer issues under tensor, sequence,
// context and expert parallelism lives in the program builders (models/llm/), none in the replay.
//
// A program is built from three inputs split by meaning:
//   Sharding     how the layer is split over ranks (tp, sequence parallelism, cp, ep);
//   TokenBatch   the tokens one rank processes in this pass: a ragged list of sequence slices
//                (a training micro-batch is one slice repeated; a serving iteration mixes prefill
//                chunks and decodes, each with its own context length);
//   KernelStack  the kernels the software stack runs (GEMM dtype, flash or unfused attention,
//                fused or eager elementwise ops).
//
// Forward programs are built alone. A forward comm step also names its conjugate in the backward
// pass (Megatron's f/g operators: an all-gather of an input becomes a reduce-scatter of its
// gradient, an all-reduce of an output becomes nothing, the identity before a column-parallel GEMM
// becomes an all-reduce), so the backward program is derived from the forward one
// (backward_program). Backward steps are tagged with the gradient they compute, input or weight,
// so zero-bubble schedules can run the weight-gradient work apart.
#include "hardware/collectives/collective.h"
#include "models/ops/op.h"
#include "sim/enum_names.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fathom::models {

// The communicator a collective runs on, relative to the rank (the workload maps it to ranks).
// ep: the ranks that exchange tokens with each other for their experts (expert parallelism); edp:
// the ranks holding the same experts, over which expert gradients are reduced (Megatron's expert
// data-parallel group).
enum class GroupKind : uint8_t { tp, cp, ep, dp, pp, edp };
inline constexpr int kGroupKinds = 6;
constexpr auto enum_names(GroupKind) {
    return sim::name_table<GroupKind>({{GroupKind::tp, "tp"},
                                       {GroupKind::cp, "cp"},
                                       {GroupKind::ep, "ep"},
                                       {GroupKind::dp, "dp"},
                                       {GroupKind::pp, "pp"},
                                       {GroupKind::edp, "edp"}});
}

// How context-parallel ranks exchange keys and values (Transformer Engine's cp_comm_type names).
//   p2p         ring attention (Megatron-LM/TE default): cp steps, each attention over one chunk
//               pair; the next chunk's K/V travel beside the current step.
//   all_gather  all-gather the K/V shards (Llama 3, torchtitan's default "allgather" rotation):
//               the gather runs beside the first (diagonal) step; the gradients are reduce-scattered
//               after the backward.
//   a2a         Ulysses (DeepSpeed): all-to-all from sequence to head sharding before attention
//               and back after it; attention runs over the whole sequence on heads / cp.
enum class CpComm : uint8_t { P2p, AllGather, A2a };
constexpr auto enum_names(CpComm) {
    return sim::name_table<CpComm>({{CpComm::P2p, "p2p"}, {CpComm::AllGather, "all_gather"}, {CpComm::A2a, "a2a"}});
}

// Mixture-of-experts token dispatchers (Megatron-Core --moe-token-dispatcher-type):
//   alltoall    NCCL all-to-all of the permuted rows: every (token, expert) pair travels;
//   deepep      DeepEP (flex dispatcher): a token travels once to each destination rank of its
//               node, and once over the network to each destination node (then NVLink forwards).
//   deepep_ll   DeepEP's low-latency kernels (decode): every (token, expert) pair travels straight
//               to the expert's rank, no deduplication; the sizes of DeepEP's own bandwidth figures
//               (docs: 128 tokens x top-8 x 7,168 fp8 values + scales = 7.57 MB in 77 us = 98 GB/s).
enum class MoeDispatcher : uint8_t { AllToAll, DeepEp, DeepEpLowLatency };
constexpr auto enum_names(MoeDispatcher) {
    return sim::name_table<MoeDispatcher>({{MoeDispatcher::AllToAll, "alltoall"},
                                           {MoeDispatcher::DeepEp, "deepep"},
                                           {MoeDispatcher::DeepEpLowLatency, "deepep_ll"}});
}

// Streaming multiprocessors a dispatcher's kernels hold while they run: what compute beside them
// (two-batch overlap) loses. DeepEP's normal (prefill) kernels run on Buffer.num_sms = 20 SMs by
// default (deepseek-ai/DeepEP deep_ep/buffer.py; DeepSeek-V3 technical report sec. 3.2.2: "only 20
// SMs" suffice for its all-to-all); its low-latency kernels receive through a hook that holds no SM
// while compute runs (DeepEP README, "hook-based communication-computation overlapping ... does
// not occupy any SM resource"). NCCL's all-to-all also takes channels, but no engine overlaps it
// with two-batch overlap: 0 (not modelled).
constexpr int dispatcher_sms(MoeDispatcher d) { return d == MoeDispatcher::DeepEp ? 20 : 0; }
// The share of the all-to-all time fathom's network prices for a dispatcher's bytes that its
// kernels reach. DeepEP's low-latency kernels: 0.90, the median of DeepEP's own table (docs/
// legacy.md at 0297fc80, H800 + CX7 400 Gb/s, 128 tokens, top-8, EP 16-256 dispatch and combine:
// 10 rows, fathom 4-22% fast, median 10.4%; the shared file's three and fathom's six); the others: 1.
constexpr double dispatcher_efficiency(MoeDispatcher d) { return d == MoeDispatcher::DeepEpLowLatency ? 0.90 : 1.0; }

struct Sharding {
    int tp = 1;
    bool sequence_parallel = false;  // norms, dropouts and residuals see 1/tp of the tokens
    int cp = 1;
    CpComm cp_comm = CpComm::P2p;
    int ep = 1;
    // Expert tensor parallelism: each expert's MLP split over etp ranks (1, or tp: the routed
    // tokens are all-gathered over the tensor-parallel group before the experts).
    int etp = 1;
    // How the MoE dispatcher moves tokens, and how many ranks of the EP group share a node.
    MoeDispatcher dispatcher = MoeDispatcher::AllToAll;
    int ep_ranks_per_node = 1;
    int ep_nodes = 1;  // nodes the EP group spans (the last one may hold fewer ranks)
};

// How a mixture-of-experts layer's router spreads tokens over the expert-parallel ranks: the
// busiest rank receives `busiest_rank_load` times the mean routed tokens (1: perfectly balanced, as
// an auxiliary balancing loss aims for), and the step waits for it.
struct RoutingLoad {
    double busiest_rank_load = 1.0;
};

struct TokenBatch {
    std::vector<SequenceSlice> slices;
    // Shared-prefix attention (Hydragen, RelayAttention): queries of sequences already in `slices`
    // that share a key prefix attend to it together, in one non-causal attention whose keys and
    // values are read once. One slice per group of sharing sequences: q_len = the group's queries,
    // kv_len = the prefix's keys. Those sequences' own slices then hold only the keys after the
    // prefix. Adds no GEMM rows (tokens() ignores it); empty when nothing is shared.
    std::vector<SequenceSlice> shared_prefix;

    // `sequences` sequences of `q_len` tokens each attending to `kv_len` keys.
    static TokenBatch uniform(int64_t sequences, int64_t q_len, int64_t kv_len);
    int64_t tokens() const;     // sum of count x q_len: the rows every GEMM of the layer sees
    int64_t kv_tokens() const;  // sum of count x kv_len: the keys and values attention reads
};

struct KernelStack {
    Dtype gemm_dtype = Dtype::bf16;  // fp8: GEMMs in fp8 with bf16 activations around them
    // false: unfused attention as in Megatron-LM 2021 (batched QK^T GEMM, fused scale-mask-softmax
    // over the full s x s scores, attention dropout, batched PV GEMM); scores are materialized.
    bool flash_attention = true;
    // false: eager PyTorch without torch.compile, where each normalization, activation and rotary
    // embedding is several kernels (kEagerPasses times the fused op's memory traffic and launches).
    bool fused_elementwise = true;
    // Storage type of the keys and values flash attention reads (serving: an fp8 KV cache halves
    // the bytes a decode step reads; training keeps bf16).
    Dtype kv_dtype = Dtype::bf16;
    AttentionKernel attention_kernel = AttentionKernel::Fa3;  // the flash kernel's class
    // Training loss: true for a fused vocab-parallel cross-entropy (Megatron-LM
    // --cross-entropy-loss-fusion, Transformer Engine's parallel_cross_entropy) that computes the loss
    // and writes the gradient in place from the bf16 logits; false: the fp32 softmax is materialized.
    bool fused_cross_entropy = false;
    // Under an fp8 GEMM recipe, sequence-parallel all-gathers carry fp8 (the activations before a
    // column-parallel GEMM in the forward, the output gradients before a row-parallel one in the
    // backward); reduce-scatters stay bf16. torchao's Float8ColwiseParallel/RowwiseParallel
    // (torchtitan docs/float8.md: "float8 all-gather ... for TP (by default for Float8Linear)").
    bool fp8_tp_all_gather = false;
    // Serving of latent attention (MLA): decode tokens attend to the compressed KV cache in absorbed
    // form (queries projected into the latent space, one latent of kv_lora_rank + rope dimensions
    // shared by all heads, FlashMLA); prefill chunks expand the latent into per-head keys and
    // values as training does (SGLang's and vLLM's MLA backends). false: every token expanded.
    bool mla_absorb = false;
    // MoE dispatch carries fp8 rows (each 128 values with a float scale) under an fp8 recipe and
    // the combine bf16, as DeepSeek's inference does with DeepEP; false: both bf16.
    bool fp8_dispatch = false;
    // The kernel library of the experts' grouped GEMMs (the serving engines' DeepEP paths run
    // DeepGEMM's grouped fp8 kernels: contiguous layout after normal dispatch, masked after
    // low-latency dispatch).
    GemmKernel expert_gemm_kernel = GemmKernel::Library;
    // Decode attention under grouped-query attention: true, each key/value head is read once for
    // its group of query heads (XQA, FlashInfer, FlashAttention); false, once per query head
    // (TensorRT-LLM's masked multi-head attention kernel before 0.7.1, which did not share a
    // group's keys and values: the 0.7.1 release notes list "MMHA optimization for MQA and GQA").
    bool gqa_shared_kv = true;
    // Weight-only quantization (serving's w4a16 and w8a16 formats: Marlin, Machete): the weight
    // GEMMs keep gemm_dtype's activations and tensor rate and read their weights in this dtype,
    // dequantized inside the kernel (models/llm/quantization.h). nullopt: weights in gemm_dtype.
    std::optional<Dtype> weight_only;
};

struct LayerInputs {
    Sharding shard;
    TokenBatch batch;
    KernelStack kernels;
    RoutingLoad routing;
};

struct CommStep {
    // The collective this pass runs (none: the identity half of a conjugate pair) and the one the
    // backward pass runs in its place (none: nothing). `bytes` is the nccl-tests size of both.
    std::optional<hardware::Collective> collective;
    std::optional<hardware::Collective> backward;
    double bytes = 0;
    GroupKind group = GroupKind::tp;
    // The backward pass gathers the same data again before its conjugate (the forward did not keep
    // the gathered tensor: all-gathered keys and values).
    bool regather_in_backward = false;
    // Collectives running beside the layer's attention (context parallelism): the attention runs as
    // `attention_steps` equal steps and `overlapped` transfers of `bytes` each run beside one step;
    // a transfer longer than its step stalls the attention by the difference. 0: not overlapped.
    int attention_steps = 0;
    int overlapped = 0;
    // The backward conjugate moves `backward_scale` x `bytes` (a tensor-parallel collective whose
    // directions differ in dtype: fp8 gathers, bf16 reduce-scatters). For an overlapped transfer,
    // per step (ring attention sends the K/V and their gradients together) beside the backward's
    // attention steps, then, with `backward_tail`, one exposed transfer of `bytes` after the last
    // step (the gradients' last hop back to the rank that owns them).
    double backward_scale = 1;
    bool backward_tail = false;
    // A tensor-parallel boundary of a linear layer: under TP communication overlap (userbuffers,
    // async TP) the transfer runs fused with the GEMM beside it. Other TP-group collectives (the
    // MoE token dispatcher's expert-TP gathers) are plain NCCL calls between kernels.
    bool gemm_fused = false;
    // The compute after this transfer waits for its exposed part (context parallelism: the
    // attention needs the exchanged keys and values, the output projection the Ulysses output);
    // false: the compute does not wait, the transfer runs on its stream after the compute before it.
    bool awaited = false;
    // A transfer that a schedule overlapping one micro-batch's communication with another's
    // compute can hide (the MoE token dispatcher's all-to-all under `ep_overlap`: DualPipe,
    // 1F1B-overlap); the pricing hides it only where the plan runs such a schedule.
    bool microbatch_overlap = false;
    // The share of the network model's time for this collective that the kernel moving it reaches
    // (1: the collective as priced); the transfer takes its priced time / efficiency.
    double efficiency = 1;
};

struct ProgramStep {
    enum class Kind : uint8_t { Compute, Comm };
    Kind kind = Kind::Compute;
    GradKind grad = GradKind::None;
    OpDesc op;      // Kind::Compute
    CommStep comm;  // Kind::Comm
};

struct LayerProgram {
    std::vector<ProgramStep> steps;

    void compute(OpDesc op, GradKind grad = GradKind::None);
    void comm(const CommStep& c, GradKind grad = GradKind::None);
    // The compute ops in order (optionally only those computing `grad`).
    std::vector<OpDesc> ops() const;
    // A copy holding only the steps tagged with one of `grads`.
    LayerProgram only(std::initializer_list<GradKind> grads) const;
};

// The backward program of a forward program: steps in reverse order; a GEMM becomes its data
// gradient [M,K] = dY[M,N] W^T (input) and weight gradient [K,N] = X^T dY (weight), of equal FLOPs;
// flash attention becomes its backward kernel (2.5x forward FLOPs, input); a memory-bound op moves
// twice its bytes (input); a comm step becomes its conjugate (input). Ops with role Embedding are
// skipped: their gradient is a scatter the embedding builder writes itself.
LayerProgram backward_program(const LayerProgram& forward);

}  // namespace fathom::models
