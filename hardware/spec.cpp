#include "hardware/spec.h"

#include "sim/error.h"

#include <algorithm>
#include <cmath>

namespace fathom::hardware {

double dtype_bytes(Dtype d) {
    switch (d) {
        case Dtype::fp8:
        case Dtype::int8: return 1;
        case Dtype::bf16:
        case Dtype::fp16: return 2;
        case Dtype::fp32:
        case Dtype::tf32: return 4;
        // 4 bits and NVFP4's fp8 scale per 16 values (MXFP4's per 32 would be 0.53125): the larger.
        case Dtype::fp4: return 0.5625;
        case Dtype::int4: return 0.515625;
    }
    return 2;
}

double AcceleratorCalibration::grouped_relative(Dtype d, double rows) const {
    const auto c = grouped_gemm_relative.find(d), h = grouped_gemm_rows_scale.find(d);
    if (c == grouped_gemm_relative.end() || h == grouped_gemm_rows_scale.end() || !(rows > 0)) return 1.0;
    // Below 128 rows (one tile of the grouped kernels, the fewest measured) the curve holds its
    // value there: a GEMM of fewer rows pads its tile.
    return c->second * -std::expm1(-std::max(rows, 128.0) / h->second);
}

double AcceleratorSpec::peak(Dtype d) const {
    auto it = peak_flops.find(d);
    if (it != peak_flops.end()) return it->second;
    // A dtype the device lacks runs at the 16-bit rate (e.g. fp8 recipes on A100 fall back to bf16).
    for (Dtype f : {Dtype::bf16, Dtype::fp16}) {
        it = peak_flops.find(f);
        if (it != peak_flops.end()) return it->second;
    }
    throw sim::InputError("accelerator '" + id + "' has no peak for " + sim::name(d));
}

}  // namespace fathom::hardware
