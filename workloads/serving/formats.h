#pragma once
// Serving's weight and activation formats (papers.md F22), the values of serving.dtype: which
// dtype the weight GEMMs compute in, which their weights are stored in, and what the format costs
// in accuracy as published.
//   bf16, fp16  16-bit weights and activations (the reference)
//   fp8         W8A8 FP8: fp8 weights, activations quantized per token or tensor, the fp8 tensor rate
//   int8        W8A8 INT8 (SmoothQuant): int8 weights and activations, the int8 tensor rate
//   fp4         W4A4 NVFP4 (Blackwell) / MXFP4 (MI355X): the fp4 tensor rate
//   w8a16       int8 weights dequantized to 16 bits in the kernel (Marlin, Machete)
//   w4a16       int4 weights with a 16-bit scale per group of 128 (AWQ, GPTQ; Marlin, Machete)
// A format computing in a dtype the device has no tensor rate for is refused (fp8 on A100, fp4 on
// H100: w8a16 and w4a16 are what runs there), and a weight-only one where the device has no
// measured weight-only kernel (AcceleratorCalibration::weight_only_efficiency).
#include "models/program/layer_program.h"

#include <string>
#include <vector>

namespace fathom::workloads::serving {

struct Format {
    const char* name;
    hardware::Dtype gemm;                    // the dtype the weight GEMMs compute in
    std::optional<hardware::Dtype> weights;  // weight-only: the weights' storage dtype
    const char* accuracy;                    // the published accuracy cost, with its source
};

const std::vector<Format>& serving_formats();
std::vector<std::string> format_names();
// The format of a name (nullptr: none such).
const Format* find_format(const std::string& name);
// The name of the format `kernels` run (gemm_dtype and weight_only).
std::string format_name(const models::KernelStack& kernels);
void apply_format(const Format& f, models::KernelStack& kernels);

}  // namespace fathom::workloads::serving
