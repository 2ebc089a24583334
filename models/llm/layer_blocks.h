#pragma once
// The building blocks the layer programs of models/llm/ share (dense_layer.cpp, moe_layer.cpp):
// the attention half of a transformer layer (multi-head, grouped-query or latent attention, with
// the collectives of tensor, sequence and context parallelism), a tensor-parallel MLP, norms and
// residuals, and eager PyTorch's kernel split. Internal to models/llm/.
#include "models/llm/model_spec.h"
#include "models/program/layer_program.h"

#include <string>

namespace fathom::models::blocks {

inline constexpr double kAct = 2.0;  // bytes per activation element (bf16)
// The measured kernel (tools/calibrate) unary elementwise passes run as: fp8 casts and dropouts.
inline constexpr const char* kUnaryKernel = "gelu";

// Elementwise op over `elements`, reading `reads` tensors and writing `writes` of that size.
// `row_width` > 0 for row kernels (norms, softmax): the width of one row (models/ops/op.h memory_op).
OpDesc elementwise(std::string name, double elements, double reads, double writes, OpRole role, std::string kernel,
                   int64_t row_width = 0);
std::string norm_kernel(const ModelSpec& m);

double tokens_of(const LayerInputs& in);                             // rows every GEMM of the layer sees
double sp_tokens_of(const LayerInputs& in);                          // rows of the norms and residuals (1/tp under SP)
double activation_bytes(const ModelSpec& m, const LayerInputs& in);  // one [T, h] bf16 tensor

// A TP collective with its backward conjugate; nothing when tp = 1. `gemm_fused`: a linear
// layer's TP boundary, which TP communication overlap fuses with the GEMM beside it
// (CommStep::gemm_fused).
void tp_comm(LayerProgram& p, const LayerInputs& in, std::optional<hardware::Collective> fwd,
             std::optional<hardware::Collective> bwd, double bytes, bool gemm_fused = false);
// Before a column-parallel GEMM: all-gather the sequence shards (backward: reduce-scatter), or
// without sequence parallelism the f operator (identity; backward: all-reduce).
void tp_enter(LayerProgram& p, const LayerInputs& in, double bytes);
// After a row-parallel GEMM: reduce-scatter (backward: all-gather), or the g operator (all-reduce;
// backward: identity).
void tp_exit(LayerProgram& p, const LayerInputs& in, double bytes);

// A norm or residual addition over the rank's [T_sp, h].
void norm(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, const std::string& suffix);
void residual(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, const std::string& name);

// Norm, projections, rotary, attention (with the CP exchange), output projection, residual.
void attention_block(LayerProgram& p, const ModelSpec& m, const LayerInputs& in);
// A tensor-parallel MLP of `width` (column-parallel FC1, activation, row-parallel FC2) between its
// TP collectives, without norm or residual; op names prefixed by `prefix`.
void mlp_gemms(LayerProgram& p, const ModelSpec& m, const LayerInputs& in, int64_t width, const std::string& prefix);

// Eager mode (no fused elementwise kernels): norms, activation, rotary and unfused softmax/dropout
// run as several kernels each (kEagerPasses); unchanged when the stack fuses them.
LayerProgram eager_split(LayerProgram p, const LayerInputs& in);

}  // namespace fathom::models::blocks
