#pragma once
// Weight-only quantization as the serving engines run it (papers.md F22): W4A16 (AWQ and GPTQ
// checkpoints, 4-bit integer weights with a 16-bit scale per group of 128) and W8A16 run in Marlin
// (A100) and Machete (H100) kernels, which stream the packed weights from memory and dequantize them
// to 16 bits in registers before the tensor-core MMA. A weight GEMM then:
//  - reads its weights at the quantized width (KernelStack::weight_only's dtype_bytes), its
//    activations and output at 16 bits: a decode step, bound by the weights' bytes, speeds up by up
//    to 16 / 4.125 = 3.9x;
//  - computes at the 16-bit tensor rate, slowed by the dequantization's work in the main loop
//    (AcceleratorCalibration::weight_only_efficiency): at large batches it is no faster than the
//    16-bit GEMM, and slower.
// The GEMMs of the weights (q, k, v, o, the MLP's and the experts') take the format; the logits,
// the router, attention and latent attention's absorbed products keep their own dtypes. Expert
// GEMMs keep the grouped kernels' curve (Marlin MoE) with the quantized weights' bytes.
#include "models/program/layer_program.h"

namespace fathom::models {

// Whether a GEMM of this role multiplies by a weight matrix the format quantizes.
bool quantized_weight_role(OpRole role);
// `p` with its weight GEMMs reading in.kernels.weight_only (unchanged without it).
LayerProgram apply_weight_only(LayerProgram p, const LayerInputs& in);

}  // namespace fathom::models
