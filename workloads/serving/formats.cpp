#include "workloads/serving/formats.h"

namespace fathom::workloads::serving {

using hardware::Dtype;

const std::vector<Format>& serving_formats() {
    static const std::vector<Format> f = {
        {"bf16", Dtype::bf16, std::nullopt, "the reference"},
        {"fp16", Dtype::fp16, std::nullopt, "the reference"},
        {"fp8", Dtype::fp8, std::nullopt,
         "lossless across model scales (Kurtic et al. 2024, arXiv 2411.02355: W8A8-FP)"},
        {"int8", Dtype::int8, std::nullopt,
         "1-3% accuracy degradation when tuned (Kurtic et al. 2024, arXiv 2411.02355: W8A8-INT)"},
        {"fp4", Dtype::fp4, std::nullopt,
         "about 1% or less degradation against FP8 on language-modelling tasks (NVIDIA's NVFP4 blog, June 2025, as "
         "secondary summaries quote it)"},
        {"w8a16", Dtype::bf16, Dtype::int8, "not measured by fathom's sources (8-bit weights with 16-bit activations)"},
        {"w4a16", Dtype::bf16, Dtype::int4,
         "competitive with 8-bit W8A8-INT, rivaling 8-bit formats (Kurtic et al. 2024, arXiv 2411.02355: W4A16-INT)"},
    };
    return f;
}

std::vector<std::string> format_names() {
    std::vector<std::string> n;
    for (const Format& f : serving_formats()) n.emplace_back(f.name);
    return n;
}

const Format* find_format(const std::string& name) {
    for (const Format& f : serving_formats())
        if (name == f.name) return &f;
    return nullptr;
}

std::string format_name(const models::KernelStack& k) {
    for (const Format& f : serving_formats())
        if (f.gemm == k.gemm_dtype && f.weights == k.weight_only) return f.name;
    return std::string(sim::name(k.gemm_dtype));  // a stack no format names (not from serving.dtype)
}

void apply_format(const Format& f, models::KernelStack& k) {
    k.gemm_dtype = f.gemm;
    k.weight_only = f.weights;
}

}  // namespace fathom::workloads::serving
