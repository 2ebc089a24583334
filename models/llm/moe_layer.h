#pragma once
// The layer program of a mixture-of-experts transformer layer (model.moe) on one rank: the
// attention half of a dense layer, then Megatron-Core's MoE block with its all-to-all token
// dispatcher (--moe-token-dispatcher-type alltoall):
//
//   norm -> router GEMM [T_sp, E] and top-k softmax -> permute (gather the rank's T_sp x k routed
//   rows by expert) -> all-to-all dispatch over the EP group -> (etp > 1: all-gather of the
//   received rows over the TP group) -> grouped FC1, activation, grouped FC2 over the E / ep local
//   experts (width expert_ffn / etp) -> (etp > 1: reduce-scatter) -> all-to-all combine ->
//   unpermute (weighted sum of each token's k outputs) -> shared experts (a tensor-parallel MLP of
//   width shared x expert_ffn over all T tokens) -> residual.
//
// T_sp is the rank's share of the micro-batch's tokens under sequence parallelism (T / tp), which
// Megatron requires for MoE with tp > 1. Balanced routing sends T_sp k rows from every rank and
// receives as many; the busiest rank (RoutingLoad) receives load x that, and its expert GEMMs and
// its receive size set the layer's time (everyone waits for it at the combine).
#include "models/llm/model_spec.h"
#include "models/program/layer_program.h"

namespace fathom::models {

LayerProgram moe_layer_forward(const ModelSpec& m, const LayerInputs& in);
// The MoE block alone (from the MLP norm to the residual): what recomputing it runs again.
LayerProgram moe_block_forward(const ModelSpec& m, const LayerInputs& in);

// Routed rows the busiest rank's local experts process in one pass: T_sp x top_k x load, with
// expert tensor parallelism T x top_k x load (the TP group's tokens, gathered or replicated).
double moe_expert_rows(const ModelSpec& m, const LayerInputs& in);
// The busiest rank's local experts that receive at least one row, in expectation under uniform
// routing: E / ep x (1 - (1 - k / E)^tokens), tokens = ep x moe_expert_rows / k (at least one).
// Its grouped GEMMs load only these experts' weights.
double moe_active_experts(const ModelSpec& m, const LayerInputs& in);
// The all-to-all send buffer of one dispatch (nccl-tests size), scaled by the busiest rank's load:
// alltoall T_sp x top_k x hidden x 2 bytes; deepep the buffer whose network (or, within a node,
// NVLink) share carries each token once per remote destination node (rank), the destinations'
// expected number under uniform routing (moe_destinations).
// deepep_ll: every (token, expert) pair, as alltoall. Dispatch rows are fp8 with their scales
// under KernelStack::fp8_dispatch and an fp8 recipe; the combine's (moe_combine_bytes) are bf16.
double moe_dispatch_bytes(const ModelSpec& m, const LayerInputs& in);
double moe_combine_bytes(const ModelSpec& m, const LayerInputs& in);
// Expected number of `parts` equal parts of the experts that hold at least one of a token's top_k
// experts (uniform routing, experts drawn without replacement).
double moe_destinations(int64_t experts, int64_t top_k, int parts);

}  // namespace fathom::models
