#include "models/llm/moe_layer.h"

#include "models/llm/layer_blocks.h"
#include "models/llm/quantization.h"

#include <algorithm>
#include <cmath>

namespace fathom::models {

using hardware::Collective;
using namespace blocks;

double moe_expert_rows(const ModelSpec& m, const LayerInputs& in) {
    // Expert tensor parallelism sees every token of the TP group: gathered from the sequence
    // shards (T_sp x etp), or already replicated without sequence parallelism (T).
    const double tokens = in.shard.etp > 1
                              ? (in.shard.sequence_parallel ? sp_tokens_of(in) * in.shard.etp : tokens_of(in))
                              : sp_tokens_of(in);
    return tokens * static_cast<double>(m.moe.top_k) * in.routing.busiest_rank_load;
}

double moe_active_experts(const ModelSpec& m, const LayerInputs& in) {
    const double E = static_cast<double>(m.moe.num_experts), k = static_cast<double>(m.moe.top_k);
    const double local = E / in.shard.ep;
    // The tokens behind the rows: over the EP group the experts take ep x rows rows, k per token.
    const double tokens = moe_expert_rows(m, in) * in.shard.ep / k;
    // Each token misses a given expert with probability 1 - k / E (k distinct experts of E).
    return std::clamp(local * (1.0 - std::pow(1.0 - k / E, tokens)), 1.0, local);
}

double moe_destinations(int64_t experts, int64_t top_k, int parts) {
    // P(no expert of a part among the k) = C(E - E/p, k) / C(E, k).
    const double E = static_cast<double>(experts), held = E / parts;
    double miss = 1.0;
    for (int64_t i = 0; i < top_k; ++i)
        miss *= std::max(0.0, (E - held - static_cast<double>(i)) / (E - static_cast<double>(i)));
    return parts * (1.0 - miss);
}

namespace {

// The send buffer of one all-to-all over the EP group whose rows are `row` bytes each.
double moe_exchange_bytes(const ModelSpec& m, const LayerInputs& in, double row) {
    const double per_token = in.shard.dispatcher == MoeDispatcher::DeepEp ? [&] {
        // The pairwise all-to-all prices (g-1)/n of its send buffer over NVLink and (n-g)/n over
        // the network: the buffer whose network share is what DeepEP sends across nodes (once per
        // remote destination node), or within one node its NVLink share (once per rank).
        const int n = in.shard.ep, g = std::min(in.shard.ep_ranks_per_node, n);
        const int nodes = std::max(1, in.shard.ep_nodes);
        if (nodes > 1) {
            const double remote = moe_destinations(m.moe.num_experts, m.moe.top_k, nodes) * (nodes - 1) / nodes;
            return remote * static_cast<double>(n) / static_cast<double>(n - g);
        }
        return moe_destinations(m.moe.num_experts, m.moe.top_k, n);
    }()
                                                                          : static_cast<double>(m.moe.top_k);
    return sp_tokens_of(in) * per_token * row * in.routing.busiest_rank_load;
}

}  // namespace

double moe_dispatch_bytes(const ModelSpec& m, const LayerInputs& in) {
    const double hidden = static_cast<double>(m.hidden);
    // fp8 rows carry one float scale per 128 values (DeepEP's fp8 dispatch).
    const bool fp8 = in.kernels.fp8_dispatch && in.kernels.gemm_dtype == Dtype::fp8;
    return moe_exchange_bytes(m, in, fp8 ? hidden + hidden / 128.0 * 4.0 : hidden * kAct);
}

double moe_combine_bytes(const ModelSpec& m, const LayerInputs& in) {
    return moe_exchange_bytes(m, in, static_cast<double>(m.hidden) * kAct);
}

namespace {

void moe_block(LayerProgram& p, const ModelSpec& m, const LayerInputs& in) {
    const MoeSpec& e = m.moe;
    const double sp = sp_tokens_of(in);
    const int64_t h = m.hidden;
    const double hd = static_cast<double>(h);
    const int etp = in.shard.etp;
    const int64_t local_experts = e.num_experts / in.shard.ep;
    const int64_t width = e.expert_ffn / etp;
    const bool gated = is_gated(m.activation);
    const Dtype gd = in.kernels.gemm_dtype;
    const bool fp8 = gd == Dtype::fp8 || gd == Dtype::int8;
    const double routed = sp * static_cast<double>(e.top_k);  // rows this rank sends
    const double rows = moe_expert_rows(m, in);
    // A grouped GEMM runs only the experts that received rows (an empty group loads no weights:
    // a decode batch of one Mixtral token reads 2 of its 8 experts), rounded up; rows per active
    // expert rounded up too: a grouped GEMM pads nothing, but its per-expert tiles are whole (one
    // GEMM of that many batches priced at the mean rows).
    const int64_t active =
        std::min<int64_t>(local_experts, static_cast<int64_t>(std::ceil(moe_active_experts(m, in) - 1e-9)));
    const int64_t rows_per_expert =
        std::max<int64_t>(1, static_cast<int64_t>(std::ceil(rows / static_cast<double>(active))));

    norm(p, m, in, "_mlp");
    // Router: logits over the experts for the rank's own tokens (bf16 GEMM), then the top-k softmax
    // reading and writing fp32 scores.
    p.compute(gemm_op("router", static_cast<int64_t>(sp), e.num_experts, h, Dtype::bf16, 1, OpRole::Router));
    p.compute(memory_op("router_topk", sp * static_cast<double>(e.num_experts) * 4.0 * 2.0, OpRole::Router, "softmax",
                        e.num_experts));
    // Permute: read each routed row, write it into its expert's slot.
    p.compute(memory_op("permute", routed * hd * kAct * 2.0, OpRole::Permute, "memcpy_d2d"));
    CommStep a2a;
    a2a.collective = a2a.backward = Collective::AllToAll;
    a2a.bytes = moe_dispatch_bytes(m, in);
    a2a.group = GroupKind::ep;
    a2a.microbatch_overlap = true;
    a2a.efficiency = dispatcher_efficiency(in.shard.dispatcher);
    if (in.shard.ep > 1) p.comm(a2a);  // dispatch (backward: the gradients' combine)
    a2a.bytes = moe_combine_bytes(m, in);
    const double gathered = rows * hd * kAct;
    // With sequence parallelism the TP group gathers its routed rows; without it every rank
    // already holds them (the f operator: nothing forward, an all-reduce of the gradients).
    const bool gather = etp > 1 && in.shard.sequence_parallel;
    if (gather) tp_comm(p, in, Collective::AllGather, Collective::ReduceScatter, gathered);
    if (fp8) p.compute(memory_op("fp8_cast_expert_fc1", rows * hd * 3, OpRole::Fp8Cast, kUnaryKernel));
    OpDesc fc1 = gemm_op("expert_fc1", rows_per_expert, gated ? 2 * width : width, h, gd, active, OpRole::ExpertUp);
    fc1.gemm_kernel = in.kernels.expert_gemm_kernel;
    p.compute(fc1);
    const double act_elems = rows * static_cast<double>(width);
    p.compute(elementwise(std::string("expert_") + sim::name(m.activation), act_elems, gated ? 2 : 1, 1,
                          OpRole::Activation, gated ? "swiglu" : "gelu"));
    if (fp8) p.compute(memory_op("fp8_cast_expert_fc2", act_elems * 3, OpRole::Fp8Cast, kUnaryKernel));
    OpDesc fc2 = gemm_op("expert_fc2", rows_per_expert, h, width, gd, active, OpRole::ExpertDown);
    fc2.gemm_kernel = in.kernels.expert_gemm_kernel;
    p.compute(fc2);
    if (gather) tp_comm(p, in, Collective::ReduceScatter, Collective::AllGather, gathered);
    if (in.shard.ep > 1) p.comm(a2a);  // combine (backward: the gradients' dispatch)
    // Unpermute: read the k outputs of each token and its routing weights, write the weighted sum.
    p.compute(memory_op("unpermute", (routed + sp) * hd * kAct, OpRole::Permute, "memcpy_d2d"));
    // Without sequence parallelism the TP-split experts leave partial sums: all-reduce them (the
    // g operator), as vLLM does after its fused MoE.
    if (etp > 1 && !in.shard.sequence_parallel) tp_exit(p, in, activation_bytes(m, in));
    if (e.shared_experts > 0) mlp_gemms(p, m, in, e.shared_experts * e.expert_ffn, "shared_");
    residual(p, m, in, "residual_mlp");
}

}  // namespace

LayerProgram moe_layer_forward(const ModelSpec& m, const LayerInputs& in) {
    LayerProgram p;
    attention_block(p, m, in);
    moe_block(p, m, in);
    return apply_weight_only(eager_split(std::move(p), in), in);
}

LayerProgram moe_block_forward(const ModelSpec& m, const LayerInputs& in) {
    LayerProgram p;
    moe_block(p, m, in);
    return eager_split(std::move(p), in);
}

}  // namespace fathom::models
