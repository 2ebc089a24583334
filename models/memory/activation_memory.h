#pragma once
// Bytes of activations one dense transformer layer keeps for its backward pass, per pass on one
// rank (the token batch of models/program/layer_program.h), with flash attention and no dropout:
//   sharded by sp (T h / tp when sequence parallel, else T h): inputs of the two norms and of the
//   QKV and FC1 GEMMs (4 tensors);
//   sharded by tp: Q, K, V, the attention output (= projection input), the FC1 output and the
//   activation output (= FC2 input).
// With fp8 GEMMs the saved GEMM inputs are the fp8 copies (1 byte instead of 2). Latent attention
// (MLA) keeps its expanded per-head Q, K, V and its two latents.
//
// A mixture-of-experts layer (moe = true, models/llm/moe_layer.h) keeps the same attention half,
// the MLP norm's input, the router's fp32 probabilities [T_sp, E], and on the busiest rank's
// expert rows R: the grouped FC1 input (GEMM dtype), its output and the activation output (the
// FC2 input), and the expert outputs the unpermute weights (bf16); plus the shared experts as a
// dense MLP of width shared x expert_ffn.
#include "models/llm/model_spec.h"
#include "models/program/layer_program.h"

namespace fathom::models {

double layer_activation_bytes(const ModelSpec& m, const LayerInputs& in, bool moe = false);
// Bytes that torchtitan's op-level selective checkpointing (every second matmul recomputed,
// models/llm/dense_layer.h every_second_matmul_recompute) drops beyond the norms and activation
// outputs that layer_selective_activation_bytes already drops: the K projection's output, the w3
// half of a gated FC1's output (dense layers), and the mid-layer residual (the MLP norm's input,
// recomputed from the layer input and the recomputed output projection).
double every_second_matmul_dropped_bytes(const ModelSpec& m, const LayerInputs& in, bool moe = false);
// Bytes one layer keeps under selective recomputation (norms and the MLP activation functions are
// recomputed in the backward pass): layer_activation_bytes minus the two norm outputs (the QKV and
// FC1 GEMM inputs) and the activation outputs (the FC2 inputs).
double layer_selective_activation_bytes(const ModelSpec& m, const LayerInputs& in, bool moe = false);
// Bytes a mixture-of-experts layer keeps when its MoE block is recomputed in the backward pass
// (Megatron-Core --recompute-modules moe): the attention half (selective: without its norm
// output) and the MoE block's input.
double moe_recomputed_layer_bytes(const ModelSpec& m, const LayerInputs& in, bool selective);
// Bytes of a latent-attention (MLA) layer's up-projection outputs (Q, K and V from the latents)
// that recomputing the up-projections in the backward pass does not keep (Megatron-Core
// --recompute-modules mla_up_proj; the DeepSeek-V3 report, section 3.2.3); 0 without MLA.
double mla_up_projection_bytes(const ModelSpec& m, const LayerInputs& in);
// Bytes kept per layer under full recomputation: the layer input only.
double layer_input_bytes(const ModelSpec& m, const LayerInputs& in);

}  // namespace fathom::models
