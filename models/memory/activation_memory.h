#pragma once
// Bytes of activations one dense transformer layer keeps for its backward pass, per pass on one
// rank (the token batch of models/program/layer_program.h), with flash attention and no dropout:
//   sharded by sp (T h / tp when sequence parallel, else T h): inputs of the two norms and of the
//   QKV and FC1 GEMMs (4 tensors);
//   sharded by tp: Q, K, V, the attention output (= projection input), the FC1 output and the
//   activation output (= FC2 input).
// With fp8 GEMMs the saved GEMM inputs are the fp8 copies (1 byte instead of 2).
#include "models/llm/model_spec.h"
#include "models/program/layer_program.h"

namespace fathom::models {

double layer_activation_bytes(const ModelSpec& m, const LayerInputs& in);
// Bytes one layer keeps under selective recomputation (norms and the MLP activation function are
// recomputed in the backward pass): layer_activation_bytes minus the two norm outputs (the QKV and
// FC1 GEMM inputs) and the activation output (the FC2 input).
double layer_selective_activation_bytes(const ModelSpec& m, const LayerInputs& in);
// Bytes kept per layer under full recomputation: the layer input only.
double layer_input_bytes(const ModelSpec& m, const LayerInputs& in);

}  // namespace fathom::models
