#pragma once
// Layer programs of a dense decoder-only transformer (models/program/layer_program.h): one
// transformer layer, the input embedding (first pipeline stage) and the output head (last stage),
// for one pass on one rank, with the collectives tensor, sequence and context parallelism imply.
//
// Shapes on one rank: T = the batch's tokens (a training micro-batch: micro_batch x seq_len / cp);
// GEMMs see all T tokens (sequence parallelism shards only the norms, dropouts and residuals, which
// then see T / tp); heads, KV heads and the MLP width are divided by tp.
//
// Collectives (bytes = one [T, h] bf16 activation unless noted):
//   tp, sequence parallel: all-gather before the QKV and FC1 GEMMs, reduce-scatter after the
//       output projection and FC2 (conjugates swapped in backward);
//   tp, no sequence parallelism: all-reduce after the output projection and FC2, and in backward
//       after the QKV and FC1 data gradients (Megatron's g and f operators);
//   cp: the keys and values of every shard are all-gathered before attention ([b, s, kv, d] x 2);
//       backward gathers them again and reduce-scatters their gradients;
//   embedding: reduce(-scatter) of the vocab-parallel lookup; head: all-gather of its input under
//       sequence parallelism, reduce(-scatter) of the input gradient in backward.
#include "models/llm/model_spec.h"
#include "models/program/layer_program.h"

namespace fathom::models {

// Passes over the data of an eager (unfused) elementwise op relative to its fused kernel. Counted
// from the eager ops: RMSNorm as x.pow(2).mean(-1), rsqrt, x * r, * weight (about 4 passes);
// SwiGLU as silu(a) then * b (5 tensor traversals against 3 fused, 1.7); rotary through complex
// multiplication with casts (about 3). 3 is their rounded mean; measured.yaml's torchtitan
// torch.compile variant (+15.7% measured) is predicted at +12% with it.
inline constexpr double kEagerPasses = 3.0;

LayerProgram dense_layer_forward(const ModelSpec& m, const LayerInputs& in);
// backward_program(dense_layer_forward(m, in)).
LayerProgram dense_layer_backward(const ModelSpec& m, const LayerInputs& in);
// Input embedding lookup (first pipeline stage), forward and backward (the gradient scatter).
LayerProgram embedding_forward(const ModelSpec& m, const LayerInputs& in);
LayerProgram embedding_backward(const ModelSpec& m, const LayerInputs& in);
// Final norm, output projection (vocab-parallel over tp, kept in bf16 under fp8 recipes) and
// fused softmax cross-entropy (last pipeline stage).
LayerProgram head_forward(const ModelSpec& m, const LayerInputs& in);
LayerProgram head_backward(const ModelSpec& m, const LayerInputs& in);

// The forward ops selective recomputation runs again in the backward pass: the memory-bound ops
// whose outputs it does not keep (norms, activation function, fp8 casts, unfused softmax and
// dropout); residual additions and rotary embeddings are kept.
LayerProgram selective_recompute(const LayerProgram& forward);

// The forward ops PyTorch op-level selective activation checkpointing recomputes under
// torchtitan's policy (torchtitan parallelize_llama.py _apply_ac, selective_ac_option "op"):
// matmul outputs are saved except every second matmul of the layer, attention outputs are saved,
// every other op is recomputed. The matmuls are counted as the eager model issues them: the fused
// QKV projection as wq, wk, wv (widths q, kv, kv) and a gated FC1 as w1, w3, so a Llama layer
// (wq wk wv wo w1 w3 w2) recomputes wk, wo and w3; a non-gated MLP (w1 w2) recomputes wo and w2 in
// a layer of 6 matmuls. All memory-bound ops except the MoE router's and permutation's are
// recomputed. `m` gives the widths the fused QKV splits into.
LayerProgram every_second_matmul_recompute(const LayerProgram& forward, const ModelSpec& m);

// The forward ops an MLA up-projection recomputation runs again in the backward pass: the query
// (its up-projection, or its projection without query compression) and key/value up-projections
// from the latents, and the rotary embedding of their outputs.
LayerProgram mla_up_projection_recompute(const LayerProgram& forward);

// Bytes one rank sends to the next pipeline stage per pass: its 1/tp share of the [T, h] bf16
// activation (Megatron scatters the boundary tensor over the TP group).
double stage_boundary_bytes(const ModelSpec& m, const LayerInputs& in);

}  // namespace fathom::models
