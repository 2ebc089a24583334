#include "models/llm/layer_blocks.h"

#include "models/llm/dense_layer.h"

#include <algorithm>

namespace fathom::models::blocks {

using hardware::Collective;

// Measured kernels (tools/calibrate) the memory-bound roles run as. Roles without a kernel of their
// own run as the measured kernel with the same memory pattern: an fp8 cast and a dropout are unary
// elementwise passes (gelu), the cross-entropy is a row softmax over the vocabulary, the embedding
// lookup a row copy.
std::string norm_kernel(const ModelSpec& m) { return m.norm == Norm::RmsNorm ? "rmsnorm" : "layernorm"; }

OpDesc elementwise(std::string name, double elements, double reads, double writes, OpRole role, std::string kernel,
                   int64_t row_width) {
    return memory_op(std::move(name), elements * kAct * (reads + writes), role, std::move(kernel), row_width);
}

double tokens_of(const LayerInputs& in) { return static_cast<double>(in.batch.tokens()); }
double sp_tokens_of(const LayerInputs& in) {
    const double t = tokens_of(in);
    return in.shard.sequence_parallel ? t / in.shard.tp : t;
}
double activation_bytes(const ModelSpec& m, const LayerInputs& in) {
    return tokens_of(in) * static_cast<double>(m.hidden) * kAct;
}

void tp_comm(LayerProgram& p, const LayerInputs& in, std::optional<Collective> fwd, std::optional<Collective> bwd,
             double bytes, bool gemm_fused) {
    if (in.shard.tp <= 1) return;
    CommStep c;
    c.collective = fwd;
    c.backward = bwd;
    c.bytes = bytes;
    c.group = GroupKind::tp;
    c.gemm_fused = gemm_fused;
    p.comm(c);
}

namespace {

// Bytes of a sequence-parallel all-gather of a bf16 activation of `bytes`: half in fp8 when the
// stack gathers fp8 (KernelStack::fp8_tp_all_gather under an fp8 recipe).
double gathered_fraction(const LayerInputs& in) {
    return in.kernels.fp8_tp_all_gather && in.kernels.gemm_dtype == Dtype::fp8 ? 0.5 : 1.0;
}

}  // namespace

void tp_enter(LayerProgram& p, const LayerInputs& in, double bytes) {
    if (!in.shard.sequence_parallel) return tp_comm(p, in, std::nullopt, Collective::AllReduce, bytes, true);
    if (in.shard.tp <= 1) return;
    // Forward all-gather of the input (fp8 with fp8 gathers), backward reduce-scatter of its
    // gradient (bf16).
    const double g = gathered_fraction(in);
    CommStep c;
    c.collective = Collective::AllGather;
    c.backward = Collective::ReduceScatter;
    c.bytes = bytes * g;
    c.backward_scale = 1.0 / g;
    c.group = GroupKind::tp;
    c.gemm_fused = true;
    p.comm(c);
}

void tp_exit(LayerProgram& p, const LayerInputs& in, double bytes) {
    if (!in.shard.sequence_parallel) return tp_comm(p, in, Collective::AllReduce, std::nullopt, bytes, true);
    if (in.shard.tp <= 1) return;
    // Forward reduce-scatter of the output (bf16), backward all-gather of its gradient.
    CommStep c;
    c.collective = Collective::ReduceScatter;
    c.backward = Collective::AllGather;
    c.bytes = bytes;
    c.backward_scale = gathered_fraction(in);
    c.group = GroupKind::tp;
    c.gemm_fused = true;
    p.comm(c);
}

void norm(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, const std::string& suffix) {
    const std::string n = m.norm == Norm::RmsNorm ? "rmsnorm" : "layernorm";
    p.compute(elementwise(n + suffix, sp_tokens_of(in) * static_cast<double>(m.hidden), 1, 1, OpRole::Norm,
                          norm_kernel(m), m.hidden));
}

void residual(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, const std::string& name) {
    p.compute(
        elementwise(name, sp_tokens_of(in) * static_cast<double>(m.hidden), 2, 1, OpRole::Residual, "residual_add"));
}

namespace {

// Roles eager PyTorch runs as several kernels (norms, rotary, activation, unfused softmax and
// dropout); residual additions and fp8 casts are single kernels either way.
bool split_when_eager(OpRole r) {
    return r == OpRole::Norm || r == OpRole::Rotary || r == OpRole::Activation || r == OpRole::AttentionSoftmax ||
           r == OpRole::AttentionDropout;
}

// The context-parallel exchange of this rank's keys and values (cp > 1), laid into `p` before the
// attention, with `a` reshaped to the attention each step runs; the Ulysses all-to-all of the
// output, which goes after the attention, is returned.
std::optional<CommStep> context_parallel_exchange(LayerProgram& p, const LayerInputs& in, AttentionShape& a,
                                                  int64_t q_heads, int64_t kv_heads, int64_t dh) {
    const int cp = in.shard.cp;
    // Each rank holds q = s / cp queries of every sequence, split load-balanced as Megatron/TE
    // and Meta do: two mirrored chunks of s / (2 cp) (chunks r and 2 cp - 1 - r), so every rank
    // does the causal total / cp. `in.batch` gives that shard as q queries over kv = s keys.
    const double local_tokens = static_cast<double>(in.batch.tokens());
    const double kv_bytes = 2.0 * local_tokens * static_cast<double>(kv_heads * dh) * kAct;  // this rank's K and V
    CommStep c;
    c.group = GroupKind::cp;
    c.awaited = true;
    if (in.shard.cp_comm == CpComm::A2a) {
        // Ulysses: all-to-all Q, K, V from sequence to head sharding, attention over the whole
        // sequence on heads / cp, all-to-all of the output back (backward: the reverse pair).
        c.collective = c.backward = Collective::AllToAll;
        c.bytes = local_tokens * static_cast<double>((q_heads + 2 * kv_heads) * dh) * kAct;
        p.comm(c);
        CommStep o = c;
        o.bytes = local_tokens * static_cast<double>(q_heads * dh) * kAct;
        a.heads = q_heads / cp;
        a.kv_heads = std::max<int64_t>(1, kv_heads / cp);
        for (SequenceSlice& x : a.slices) x.q_len *= cp;
        return o;
    }
    if (in.shard.cp_comm == CpComm::P2p) {
        // Ring: cp - 1 sends of this rank's K/V chunk pair, each beside one attention step;
        // backward sends K/V with their gradients, and the gradients' last hop is exposed.
        c.collective = c.backward = Collective::SendRecv;
        c.bytes = kv_bytes;
        c.overlapped = cp - 1;
        c.backward_scale = 2;
        c.backward_tail = true;
    } else {
        // All-gather (nccl-tests size: the gathered K/V) beside the first step; the backward
        // gathers again beside its first step and reduce-scatters dK, dV after the last.
        c.collective = Collective::AllGather;
        c.backward = Collective::ReduceScatter;
        c.bytes = kv_bytes * cp;
        c.overlapped = 1;
        c.regather_in_backward = true;
    }
    c.attention_steps = cp;
    p.comm(c);
    // cp steps of equal work: the diagonal step (the rank's two chunks against their own
    // keys, causal: (s/cp)^2 / 2) and cp - 1 steps of (s/cp) x (s/(2 cp)) unmasked pairs.
    std::vector<SequenceSlice> diagonal, rest;
    for (const SequenceSlice& x : in.batch.slices) {
        diagonal.push_back({x.count, x.q_len, x.q_len});
        rest.push_back({x.count * (cp - 1), x.q_len, std::max<int64_t>(1, x.q_len / 2)});
    }
    AttentionShape off = a;
    off.causal = false;
    off.slices = std::move(rest);
    a.slices = std::move(diagonal);
    if (in.kernels.flash_attention) p.compute(attention_op(false, off, in.kernels.kv_dtype));
    else a.slices.insert(a.slices.end(), off.slices.begin(),
                         off.slices.end());  // unfused: priced per slice below
    return std::nullopt;
}

// Hydragen's decomposition: the shared prefix in one batched, non-causal attention (its KV read
// once per group, the queries of the group as one matrix), the suffixes as usual, then the two
// partial outputs merged by their log-sum-exp: read both, write one.
void shared_prefix_attention(LayerProgram& p, const LayerInputs& in, const AttentionShape& a, int64_t q_heads,
                             int64_t dh) {
    AttentionShape shared = a;
    shared.causal = false;
    shared.slices = in.batch.shared_prefix;
    OpDesc op = attention_op(false, shared, in.kernels.kv_dtype);
    op.name = "attention_shared_prefix";
    p.compute(std::move(op));
    double queries = 0;
    for (const SequenceSlice& x : in.batch.shared_prefix) queries += static_cast<double>(x.count * x.q_len);
    p.compute(elementwise("attention_merge", queries * static_cast<double>(q_heads * dh), 2, 1, OpRole::Attention,
                          "residual_add"));
}

// The attention itself: flash attention, or the unfused kernels of Megatron-LM 2021 per slice.
void core_attention(LayerProgram& p, const LayerInputs& in, const AttentionShape& a, int64_t dh) {
    if (in.kernels.flash_attention) {
        p.compute(attention_op(false, a, in.kernels.kv_dtype));
    } else {
        const Dtype d16 = in.kernels.gemm_dtype == Dtype::fp8 ? Dtype::bf16 : in.kernels.gemm_dtype;
        for (const SequenceSlice& x : a.slices) {
            const int64_t bh = x.count * a.heads;
            const double scores =
                static_cast<double>(bh) * static_cast<double>(x.q_len) * static_cast<double>(x.kv_len);
            p.compute(gemm_op("attention_scores", x.q_len, x.kv_len, dh, d16, bh, OpRole::AttentionScores));
            p.compute(elementwise("scale_mask_softmax", scores, 1, 1, OpRole::AttentionSoftmax, "softmax", x.kv_len));
            // read, write, 1-byte mask
            p.compute(memory_op("attention_dropout", scores * (kAct * 2 + 1), OpRole::AttentionDropout, kUnaryKernel));
            p.compute(gemm_op("attention_values", x.q_len, dh, x.kv_len, d16, bh, OpRole::AttentionValues));
        }
    }
}

// Attention over q_heads (kv_heads keys/values) of head dimension dh on this rank, with the
// context-parallel exchange of its keys and values.
void attention(LayerProgram& p, const LayerInputs& in, int64_t q_heads, int64_t kv_heads, int64_t dh) {
    AttentionShape a;
    a.heads = q_heads;
    a.kv_heads = kv_heads;
    a.head_dim = dh;
    a.causal = true;
    a.kernel = in.kernels.attention_kernel;
    a.kv_read_per_query_head = !in.kernels.gqa_shared_kv;
    a.slices = in.batch.slices;
    std::optional<CommStep> ulysses_out;
    if (in.shard.cp > 1) ulysses_out = context_parallel_exchange(p, in, a, q_heads, kv_heads, dh);
    if (!in.batch.shared_prefix.empty()) shared_prefix_attention(p, in, a, q_heads, dh);
    core_attention(p, in, a, dh);
    if (ulysses_out) p.comm(*ulysses_out);
}

// Latent attention as serving engines run it (KernelStack::mla_absorb). Prefill slices expand the
// latent of their keys (context and new tokens) into per-head keys and values (kv_up over those
// keys) and run flash attention over them; decode slices (one query) stay in the latent space:
// each head's no-rope query is absorbed into the latent (batched [D, qk_nope] x [qk_nope, kv_lora]
// over the heads, bf16), all heads attend to the shared latent of kv_lora + rope dimensions
// (FlashMLA: values are its first kv_lora dimensions, priced at the mean head dimension of keys
// and values, 4 h q kv (kv_lora + rope + kv_lora) / 2 FLOPs; the latent read once per key), and
// the latent output is projected back per head ([D, kv_lora] x [kv_lora, v_head_dim], bf16).
void mla_serving_attention(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, int64_t q_heads) {
    const MlaSpec& a = m.mla;
    const Dtype gd = in.kernels.gemm_dtype;
    std::vector<SequenceSlice> prefill, decode;
    int64_t prefill_keys = 0, decodes = 0;
    for (const SequenceSlice& x : in.batch.slices) {
        if (x.q_len > 1) {
            prefill.push_back(x);
            prefill_keys += x.count * x.kv_len;
        } else {
            decode.push_back(x);
            decodes += x.count;
        }
    }
    if (!prefill.empty()) {
        p.compute(gemm_op("kv_up", prefill_keys, q_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, gd, 1,
                          OpRole::QkvProjection));
        LayerInputs pre = in;
        pre.batch.slices = std::move(prefill);
        attention(p, pre, q_heads, q_heads, static_cast<int64_t>(m.attention_head_dim() + 0.5));
    }
    if (decodes > 0) {
        p.compute(gemm_op("q_absorb", decodes, a.kv_lora_rank, a.qk_nope_head_dim, Dtype::bf16, q_heads,
                          OpRole::QkvProjection));
        AttentionShape s;
        s.heads = q_heads;
        s.kv_heads = 1;
        s.head_dim = (2 * a.kv_lora_rank + a.qk_rope_head_dim + 1) / 2;
        s.latent_kv_dim = a.kv_lora_rank + a.qk_rope_head_dim;
        s.causal = true;
        s.kernel = AttentionKernel::MlaDecode;
        s.slices = std::move(decode);
        OpDesc op = attention_op(false, s, in.kernels.kv_dtype);
        op.name = "attention_mla_decode";
        p.compute(std::move(op));
        p.compute(
            gemm_op("v_absorb", decodes, a.v_head_dim, a.kv_lora_rank, Dtype::bf16, q_heads, OpRole::QkvProjection));
    }
}

}  // namespace

void attention_block(LayerProgram& p, const ModelSpec& m, const LayerInputs& in) {
    const int64_t t = in.batch.tokens();
    const double tf = static_cast<double>(t);
    const double act = activation_bytes(m, in);
    const int tp = in.shard.tp;
    const int64_t h = m.hidden;
    const double hd = static_cast<double>(h);
    const int64_t q_heads = m.heads / tp;
    const Dtype gd = in.kernels.gemm_dtype;
    const bool fp8 = gd == Dtype::fp8 || gd == Dtype::int8;  // 8-bit activations: a cast before each GEMM

    norm(p, m, in, "_attn");
    tp_enter(p, in, act);
    if (fp8) p.compute(memory_op("fp8_cast_qkv", tf * hd * 3, OpRole::Fp8Cast, kUnaryKernel));  // read bf16, write fp8
    int64_t out_in = 0;  // the output projection's input width on this rank
    if (m.mla.enabled()) {
        // Multi-head latent attention as Megatron-Core trains it: the down projections are
        // duplicated on every TP rank (their outputs are small), the up projections column-parallel
        // over heads; the latent expands into per-head keys and values (heads = kv heads), and
        // attention runs on the expanded heads, priced at the mean of the query/key and value head
        // dimensions (exact for its FLOPs and its K/V bytes).
        const MlaSpec& a = m.mla;
        const int64_t qk = a.qk_head_dim();
        if (a.q_lora_rank > 0) {
            p.compute(gemm_op("q_down", t, a.q_lora_rank, h, gd, 1, OpRole::QkvProjection));
            p.compute(elementwise("q_norm", tf * static_cast<double>(a.q_lora_rank), 1, 1, OpRole::Norm, norm_kernel(m),
                                  a.q_lora_rank));
            p.compute(gemm_op("q_up", t, q_heads * qk, a.q_lora_rank, gd, 1, OpRole::QkvProjection));
        } else {
            p.compute(gemm_op("q_proj", t, q_heads * qk, h, gd, 1, OpRole::QkvProjection));
        }
        p.compute(gemm_op("kv_down", t, a.kv_lora_rank + a.qk_rope_head_dim, h, gd, 1, OpRole::QkvProjection));
        p.compute(elementwise("kv_norm", tf * static_cast<double>(a.kv_lora_rank), 1, 1, OpRole::Norm, norm_kernel(m),
                              a.kv_lora_rank));
        const OpDesc rotary = elementwise("rotary", tf * static_cast<double>((q_heads + 1) * a.qk_rope_head_dim), 1, 1,
                                          OpRole::Rotary, "rotary");
        out_in = q_heads * a.v_head_dim;
        if (in.kernels.mla_absorb && in.shard.cp == 1 && in.batch.shared_prefix.empty()) {
            p.compute(rotary);
            mla_serving_attention(p, m, in, q_heads);
        } else {
            p.compute(gemm_op("kv_up", t, q_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, gd, 1,
                              OpRole::QkvProjection));
            p.compute(rotary);
            attention(p, in, q_heads, q_heads, static_cast<int64_t>(m.attention_head_dim() + 0.5));
        }
    } else {
        const int64_t dh = m.dim_head();
        const int64_t kv_heads = std::max<int64_t>(1, m.kv_heads / tp);
        p.compute(gemm_op("qkv", t, (q_heads + 2 * kv_heads) * dh, h, gd, 1, OpRole::QkvProjection));
        if (m.position == PositionEmbedding::Rope)
            p.compute(elementwise("rotary", tf * static_cast<double>((q_heads + kv_heads) * dh), 1, 1, OpRole::Rotary,
                                  "rotary"));
        attention(p, in, q_heads, kv_heads, dh);
        out_in = q_heads * dh;
    }
    if (fp8) p.compute(memory_op("fp8_cast_proj", tf * static_cast<double>(out_in) * 3, OpRole::Fp8Cast, kUnaryKernel));
    p.compute(gemm_op("attn_proj", t, h, out_in, gd, 1, OpRole::OutProjection));
    tp_exit(p, in, act);
    residual(p, m, in, "residual_attn");
}

void mlp_gemms(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, int64_t width, const std::string& prefix) {
    const int64_t t = in.batch.tokens();
    const double tf = static_cast<double>(t);
    const double act = activation_bytes(m, in);
    const int64_t w = width / in.shard.tp;
    const bool gated = is_gated(m.activation);
    const Dtype gd = in.kernels.gemm_dtype;
    const bool fp8 = gd == Dtype::fp8 || gd == Dtype::int8;
    tp_enter(p, in, act);
    if (fp8)
        p.compute(memory_op("fp8_cast_" + prefix + "fc1", tf * static_cast<double>(m.hidden) * 3, OpRole::Fp8Cast,
                            kUnaryKernel));
    p.compute(gemm_op(prefix + "fc1", t, gated ? 2 * w : w, m.hidden, gd, 1, OpRole::MlpUp));
    const double act_elems = tf * static_cast<double>(w);
    p.compute(elementwise(prefix + sim::name(m.activation), act_elems, gated ? 2 : 1, 1, OpRole::Activation,
                          gated ? "swiglu" : "gelu"));
    if (fp8) p.compute(memory_op("fp8_cast_" + prefix + "fc2", act_elems * 3, OpRole::Fp8Cast, kUnaryKernel));
    p.compute(gemm_op(prefix + "fc2", t, m.hidden, w, gd, 1, OpRole::MlpDown));
    tp_exit(p, in, act);
}

LayerProgram eager_split(LayerProgram p, const LayerInputs& in) {
    if (in.kernels.fused_elementwise) return p;
    LayerProgram eager;
    for (const auto& s : p.steps) {
        const int copies =
            s.kind == ProgramStep::Kind::Compute && s.op.kind == OpKind::MemoryBound && split_when_eager(s.op.role)
                ? static_cast<int>(kEagerPasses)
                : 1;
        for (int i = 0; i < copies; ++i) eager.steps.push_back(s);
    }
    return eager;
}

}  // namespace fathom::models::blocks
