#pragma once
// A dense decoder-only transformer, as the catalog (models/catalog/*.yaml) and measured.yaml
// describe it. Plain data; parameter counts are derived, not stored.
#include <cstdint>
#include <string>

namespace fathom::models {

enum class Activation { Gelu, Relu, SquaredRelu, Swiglu, Geglu };
enum class Norm { LayerNorm, RmsNorm };
enum class PositionEmbedding { Rope, Alibi, Learned, None };

const char* activation_name(Activation a);
bool is_gated(Activation a);

struct ModelSpec {
    std::string id;
    std::string name;
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

    int64_t dim_head() const { return head_dim > 0 ? head_dim : hidden / heads; }
    // Parameters of one transformer layer (attention + MLP + norms).
    double layer_params() const;
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
