#include "models/llm/model_spec.h"

namespace fathom::models {

const char* activation_name(Activation a) {
    switch (a) {
        case Activation::Gelu: return "gelu";
        case Activation::Relu: return "relu";
        case Activation::SquaredRelu: return "squared_relu";
        case Activation::Swiglu: return "swiglu";
        case Activation::Geglu: return "geglu";
    }
    return "?";
}

bool is_gated(Activation a) { return a == Activation::Swiglu || a == Activation::Geglu; }

double ModelSpec::layer_params() const {
    const double h = static_cast<double>(hidden);
    const double q = static_cast<double>(heads * dim_head());
    const double kv = static_cast<double>(kv_heads * dim_head());
    const double attn = h * (q + 2 * kv) + q * h;
    const double mlp = (is_gated(activation) ? 3.0 : 2.0) * h * static_cast<double>(ffn);
    double extra = 2 * h * (norm == Norm::LayerNorm ? 2 : 1);  // two norms
    if (bias) extra += (q + 2 * kv) + h + static_cast<double>(ffn) * (is_gated(activation) ? 2 : 1) + h;
    return attn + mlp + extra;
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
    return static_cast<double>(layers) * layer_params() + embedding_params(seq_len) + output_params() +
           static_cast<double>(hidden) * (norm == Norm::LayerNorm ? 2 : 1);
}

double ModelSpec::forward_flops_per_token(int64_t seq_len, bool causal_attention) const {
    const double h = static_cast<double>(hidden);
    const double q = static_cast<double>(heads * dim_head());
    const double kv = static_cast<double>(kv_heads * dim_head());
    const double matmul = 2.0 * (h * (q + 2 * kv) + q * h + (is_gated(activation) ? 3.0 : 2.0) * h * static_cast<double>(ffn));
    const double attention = 2.0 * 2.0 * static_cast<double>(seq_len) * q * (causal_attention ? 0.5 : 1.0);  // QK^T, PV
    const double logits = 2.0 * h * static_cast<double>(vocab);
    return static_cast<double>(layers) * (matmul + attention) + logits;
}

}  // namespace fathom::models
