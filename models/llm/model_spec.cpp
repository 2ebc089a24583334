#include "models/llm/model_spec.h"

namespace fathom::models {

bool is_gated(Activation a) { return a == Activation::Swiglu || a == Activation::Geglu; }

int64_t ModelSpec::q_width() const { return mla.enabled() ? heads * mla.qk_head_dim() : heads * dim_head(); }
int64_t ModelSpec::k_width() const { return mla.enabled() ? heads * mla.qk_head_dim() : kv_heads * dim_head(); }
int64_t ModelSpec::v_width() const { return mla.enabled() ? heads * mla.v_head_dim : kv_heads * dim_head(); }

double ModelSpec::attention_head_dim() const {
    return mla.enabled() ? 0.5 * static_cast<double>(mla.qk_head_dim() + mla.v_head_dim)
                         : static_cast<double>(dim_head());
}

bool ModelSpec::is_moe_layer(int64_t l) const {
    if (!moe.enabled() || l < moe.dense_layers) return false;
    const int64_t f = moe.layer_frequency > 0 ? moe.layer_frequency : 1;
    // Every f-th of the remaining layers, counting from 1: with f = 2, layers 1, 3, 5, ... after the
    // dense ones (Llama 4 Maverick's interleave_moe_layer_step 2: layer 0 dense, layer 1 MoE).
    return (l - moe.dense_layers + 1) % f == 0;
}

int64_t ModelSpec::moe_layers() const {
    int64_t n = 0;
    for (int64_t l = 0; l < layers; ++l) n += is_moe_layer(l) ? 1 : 0;
    return n;
}

double ModelSpec::attention_gemm_params() const {
    const double h = static_cast<double>(hidden);
    if (mla.enabled()) {
        // q: down to q_lora_rank, up to heads x qk (or one projection); kv: down to kv_lora_rank +
        // the shared rotary key, up to heads x (nope + v); output projection.
        const double qk = static_cast<double>(q_width());
        const double ql = static_cast<double>(mla.q_lora_rank);
        const double q = mla.q_lora_rank > 0 ? h * ql + ql * qk : h * qk;
        const double kvr = static_cast<double>(mla.kv_lora_rank);
        const double kv = h * (kvr + static_cast<double>(mla.qk_rope_head_dim)) +
                          kvr * static_cast<double>(heads * (mla.qk_nope_head_dim + mla.v_head_dim));
        return q + kv + static_cast<double>(v_width()) * h;
    }
    const double q = static_cast<double>(q_width()), kv = static_cast<double>(k_width());
    return h * (q + 2 * kv) + q * h;
}

double ModelSpec::attention_params() const {
    const double h = static_cast<double>(hidden);
    double p = attention_gemm_params() + 2 * h * (norm == Norm::LayerNorm ? 2 : 1);   // attention and MLP norms
    if (mla.enabled()) p += static_cast<double>(mla.q_lora_rank + mla.kv_lora_rank);  // the latents' norms
    else if (bias) p += static_cast<double>(q_width() + 2 * k_width()) + h;
    return p;
}

double ModelSpec::mlp_gemm_params(int64_t width) const {
    return (is_gated(activation) ? 3.0 : 2.0) * static_cast<double>(hidden) * static_cast<double>(width);
}

double ModelSpec::mlp_params(int64_t width) const {
    double p = mlp_gemm_params(width);
    if (bias) p += static_cast<double>(width) * (is_gated(activation) ? 2 : 1) + static_cast<double>(hidden);
    return p;
}

double ModelSpec::replicated_params(bool moe_layer) const {
    const double h = static_cast<double>(hidden);
    double p = 2 * h * (norm == Norm::LayerNorm ? 2 : 1);
    if (mla.enabled()) {
        p += h * static_cast<double>(mla.q_lora_rank + mla.kv_lora_rank + mla.qk_rope_head_dim) +
             static_cast<double>(mla.q_lora_rank + mla.kv_lora_rank);
    }
    if (moe_layer) p += h * static_cast<double>(moe.num_experts);
    return p;
}

double ModelSpec::moe_layer_nonexpert_params() const {
    const double router = static_cast<double>(hidden) * static_cast<double>(moe.num_experts);
    const double shared = moe.shared_experts > 0 ? mlp_params(moe.shared_experts * moe.expert_ffn) : 0.0;
    return attention_params() + router + shared;
}

double ModelSpec::layer_params(int64_t l) const {
    if (!is_moe_layer(l)) return layer_params();
    return moe_layer_nonexpert_params() + static_cast<double>(moe.num_experts) * expert_params();
}

double ModelSpec::embedding_params(int64_t seq_len) const {
    double p = static_cast<double>(vocab) * static_cast<double>(hidden);
    if (position == PositionEmbedding::Learned) p += static_cast<double>(seq_len) * static_cast<double>(hidden);
    return p;
}

double ModelSpec::output_params() const {
    return tied_embeddings ? 0.0 : static_cast<double>(vocab) * static_cast<double>(hidden);
}

double ModelSpec::total_params(int64_t seq_len) const {
    double p =
        embedding_params(seq_len) + output_params() + static_cast<double>(hidden) * (norm == Norm::LayerNorm ? 2 : 1);
    for (int64_t l = 0; l < layers; ++l) p += layer_params(l);
    return p;
}

double ModelSpec::active_params(int64_t seq_len) const {
    double p = total_params(seq_len);
    const double idle = static_cast<double>(moe.num_experts - moe.top_k) * expert_params();
    return p - static_cast<double>(moe_layers()) * idle;
}

double ModelSpec::forward_flops_per_token(int64_t seq_len, bool causal_attention) const {
    const double h = static_cast<double>(hidden);
    // GEMM FLOPs are 2 x the GEMM weights a token passes through (norms and biases are not GEMMs).
    const double attention_gemms = attention_gemm_params();
    const double dense_mlp = mlp_gemm_params(ffn);
    const double moe_mlp = static_cast<double>(hidden * moe.num_experts) +
                           static_cast<double>(moe.top_k + moe.shared_experts) * mlp_gemm_params(moe.expert_ffn);
    // Scores and values: 4 s q-width per token over the full square, half of it causal.
    const double attention = 2.0 * 2.0 * static_cast<double>(seq_len) * static_cast<double>(heads) *
                             attention_head_dim() * (causal_attention ? 0.5 : 1.0);
    const double n_moe = static_cast<double>(moe_layers());
    const double n_dense = static_cast<double>(layers) - n_moe;
    const double logits = 2.0 * h * static_cast<double>(vocab);
    return static_cast<double>(layers) * (2.0 * attention_gemms + attention) + n_dense * 2.0 * dense_mlp +
           n_moe * 2.0 * moe_mlp + logits;
}

}  // namespace fathom::models
