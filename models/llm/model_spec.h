#pragma once
// A decoder-only transformer, dense or mixture-of-experts, with multi-head or latent (MLA)
// attention, as the catalog (models/catalog/*.yaml) and measured.yaml describe it. Plain data;
// parameter counts and FLOPs are derived, not stored.
#include "sim/enum_names.h"

#include <cstdint>
#include <string>

namespace fathom::models {

enum class Activation { Gelu, Relu, SquaredRelu, Swiglu, Geglu };
constexpr auto enum_names(Activation) {
    return sim::name_table<Activation>({{Activation::Gelu, "gelu"},
                                        {Activation::Relu, "relu"},
                                        {Activation::SquaredRelu, "squared_relu"},
                                        {Activation::Swiglu, "swiglu"},
                                        {Activation::Geglu, "geglu"}});
}
enum class Norm { LayerNorm, RmsNorm };
constexpr auto enum_names(Norm) {
    return sim::name_table<Norm>({{Norm::LayerNorm, "layernorm"}, {Norm::RmsNorm, "rmsnorm"}});
}
enum class PositionEmbedding { Rope, Alibi, Learned, None };
constexpr auto enum_names(PositionEmbedding) {
    return sim::name_table<PositionEmbedding>({{PositionEmbedding::Rope, "rope"},
                                               {PositionEmbedding::Alibi, "alibi"},
                                               {PositionEmbedding::Learned, "learned"},
                                               {PositionEmbedding::None, "none"}});
}

bool is_gated(Activation a);

// Mixture-of-experts layers (measured-format.md `model.moe`): the first `dense_layers` layers are
// dense (MLP width `ffn`); of the rest, every `layer_frequency`-th is MoE (1: all), the others dense.
// A MoE layer routes each token to `top_k` of `num_experts` experts of width `expert_ffn` (gated
// like the dense MLP) through a linear router, and every token also passes `shared_experts`
// always-active experts of the same width (one MLP of width shared x expert_ffn).
struct MoeSpec {
    int64_t num_experts = 0;  // 0: a dense model
    int64_t top_k = 0;
    int64_t expert_ffn = 0;
    int64_t shared_experts = 0;
    int64_t dense_layers = 0;
    int64_t layer_frequency = 1;
    bool enabled() const { return num_experts > 0; }
};

// Multi-head latent attention (DeepSeek-V2/V3): queries through a low-rank bottleneck of
// `q_lora_rank` (0: a plain projection), keys and values through one of `kv_lora_rank` plus a
// shared rotary key of `qk_rope_head_dim`; per head, queries and keys have
// qk_nope_head_dim + qk_rope_head_dim dimensions and values v_head_dim. Training expands the
// latent into per-head keys and values (heads = kv heads).
struct MlaSpec {
    int64_t q_lora_rank = 0;
    int64_t kv_lora_rank = 0;  // 0: not MLA
    int64_t qk_nope_head_dim = 0;
    int64_t qk_rope_head_dim = 0;
    int64_t v_head_dim = 0;
    bool enabled() const { return kv_lora_rank > 0; }
    int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

struct ModelSpec {
    std::string id;
    std::string name;
    std::string huggingface;  // "meta-llama/Llama-3.1-70B": the checkpoint's repository, "" when unknown
    int64_t layers = 0;
    int64_t hidden = 0;
    int64_t heads = 0;
    int64_t kv_heads = 0;
    int64_t head_dim = 0;  // 0 = hidden / heads
    int64_t ffn = 0;
    int64_t vocab = 0;
    int64_t max_seq_len = 0;
    Activation activation = Activation::Gelu;
    Norm norm = Norm::LayerNorm;
    PositionEmbedding position = PositionEmbedding::Rope;
    bool tied_embeddings = false;
    bool bias = false;
    MoeSpec moe;
    MlaSpec mla;

    int64_t dim_head() const { return head_dim > 0 ? head_dim : hidden / heads; }
    // Widths (over all heads) of the attention's queries, keys and values, and the head dimension
    // whose 4 s^2 h d forward FLOPs equal the attention's (MLA: (qk + v) / 2 per head).
    int64_t q_width() const;
    int64_t k_width() const;
    int64_t v_width() const;
    double attention_head_dim() const;

    // Whether layer `l` (0-based) is a mixture-of-experts layer.
    bool is_moe_layer(int64_t l) const;
    int64_t moe_layers() const;
    // Parameters of the attention block with its norm (and the MLP's norm), and of its GEMMs alone.
    double attention_params() const;
    double attention_gemm_params() const;
    // Parameters of a dense MLP of width `width` (biases when the model has them), and of its GEMMs.
    double mlp_params(int64_t width) const;
    double mlp_gemm_params(int64_t width) const;
    double expert_params() const { return mlp_params(moe.expert_ffn); }
    // Parameters of layer kind (dense, MoE) that tensor parallelism replicates on every rank: the
    // norms, latent attention's down projections and latent norms, a MoE layer's router.
    double replicated_params(bool moe_layer) const;
    // Parameters of a MoE layer outside its routed experts: attention, norms, router, shared experts.
    double moe_layer_nonexpert_params() const;
    // Parameters of layer `l`: attention + its MLP (all routed experts of a MoE layer) + norms.
    double layer_params(int64_t l) const;
    // Parameters of a dense layer (layer_params(0) of a dense model).
    double layer_params() const { return attention_params() + mlp_params(ffn); }
    // Parameters one token passes through (routed top_k of the experts).
    double active_params(int64_t seq_len) const;
    // Input embedding (+ learned positions) parameters.
    double embedding_params(int64_t seq_len) const;
    // Output projection parameters (0 when tied to the input embedding).
    double output_params() const;
    double total_params(int64_t seq_len) const;
    // Forward FLOPs per token of the dense matmuls (2 x params touched) plus attention, the
    // "model FLOPs" convention; training = 3x this. Attention's score and value matmuls are
    // 4 s h per layer over the full s x s square; `causal_attention` counts only the causal half
    // (2 s h), which is what a causal model computes. Sources differ (measured-format.md,
    // `attention_flops`): Megatron-LM before 2025-03, NeMo before 2025-08, torchtitan, MaxText
    // before 2025-07 and llm-foundry count the full square.
    double forward_flops_per_token(int64_t seq_len, bool causal_attention = true) const;
};

}  // namespace fathom::models
