#pragma once
// LoRA fine-tuning (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): the
// base weights are frozen and every adapted linear projection W (k -> n) gets a trainable pair
// A (k -> r) and B (r -> n) added beside it, y = x W + (x A) B.
//
// Adapted projections: every linear GEMM of a transformer layer as fathom's programs fuse them
// (attention's fused query/key/value projection, latent down/up projections, the output
// projection, the MLP's fused FC1 and FC2): NeMo's default LoRA targets (linear_qkv, linear_proj,
// linear_fc1, linear_fc2). Hugging Face PEFT's "all-linear" adapts q, k, v and gate, up apart,
// which has more A matrices (more parameters and FLOPs) than this. The embedding and output layer
// stay frozen, unadapted.
//
// What changes in a step:
//  - forward: per adapted GEMM of m tokens two more GEMMs, m x r x k and m x n x r (bf16 even under
//    fp8 recipes), 2 m r (k + n) FLOPs;
//  - backward: the frozen GEMM computes its input gradient only (no weight gradient); each adapter
//    GEMM both;
//  - states: gradients and optimizer states exist for the adapters only; the frozen weights are
//    held in bf16 with no fp32 master copy.
// Tensor parallelism: the adapter follows its projection's sharding (A replicated and B split for
// a column-parallel projection, A split and B replicated for a row-parallel one), so the per-rank
// GEMM shapes of the program give the per-rank adapter; the r-wide partial sums of a row-parallel
// adapter are all-reduced over the TP group, a collective of m x r elements left out here.
#include "models/program/layer_program.h"

namespace fathom::models {

// Whether a GEMM of this role is adapted.
bool lora_target(OpRole role);
// The forward program with adapters of rank `rank` beside every adapted GEMM (marked frozen).
LayerProgram with_lora(const LayerProgram& forward, int rank);
// The program with every GEMM frozen and weight-gradient-only work dropped (the embedding's and
// output layer's programs under LoRA).
LayerProgram frozen(const LayerProgram& program);
// Trainable adapter parameters one rank holds for a forward program: r (k + n) per adapted GEMM.
double lora_params(const LayerProgram& forward, int rank);

// Serving many adapters at once (S-LoRA, Punica; workloads/serving/lora.h). Adapted projections
// as an engine loads a Hugging Face adapter: every linear projection of the layer (q, k, v, o,
// gate, up, down), or the attention's alone (`attention_only`). A fused projection has one A per
// slice it fuses (three for query/key/value, two for a gated MLP's gate and up) and one B over its
// whole output, so its adapter has r (slices k + n) parameters.
int lora_slices(const OpDesc& gemm, bool gated);
bool lora_serving_target(OpRole role, bool attention_only);
// The batched LoRA kernels beside the forward's adapted GEMMs for a batch whose tokens belong to
// `adapters` distinct adapters (Punica's SGMV, as vLLM and SGLang run it): per adapted GEMM of m
// tokens a shrink of `adapters` GEMMs ceil(m / adapters) x (slices r) x k, each reading its
// adapter's A, and an expand of `adapters` GEMMs ceil(m / adapters) x n x r, each reading its B.
// Only these ops (the base layer is priced on its own).
LayerProgram lora_serving_program(const LayerProgram& forward, int64_t rank, int64_t adapters, bool attention_only,
                                  bool gated);
// Parameters of one adapter of rank `rank` a rank holds for one layer of `forward` (per-rank shapes).
double lora_serving_params(const LayerProgram& forward, int64_t rank, bool attention_only, bool gated);

}  // namespace fathom::models
