#include "hardware/spec.h"

#include "sim/error.h"

namespace fathom::hardware {

const char* dtype_name(Dtype d) {
    switch (d) {
        case Dtype::fp32: return "fp32";
        case Dtype::tf32: return "tf32";
        case Dtype::bf16: return "bf16";
        case Dtype::fp16: return "fp16";
        case Dtype::fp8: return "fp8";
        case Dtype::int8: return "int8";
    }
    return "?";
}

std::optional<Dtype> parse_dtype(const std::string& s) {
    for (Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::int8})
        if (s == dtype_name(d)) return d;
    return std::nullopt;
}

double dtype_bytes(Dtype d) {
    switch (d) {
        case Dtype::fp8:
        case Dtype::int8: return 1;
        case Dtype::bf16:
        case Dtype::fp16: return 2;
        case Dtype::fp32:
        case Dtype::tf32: return 4;
    }
    return 2;
}

double AcceleratorSpec::peak(Dtype d) const {
    auto it = peak_flops.find(d);
    if (it != peak_flops.end()) return it->second;
    // A dtype the device lacks runs at the 16-bit rate (e.g. fp8 recipes on A100 fall back to bf16).
    for (Dtype f : {Dtype::bf16, Dtype::fp16}) {
        it = peak_flops.find(f);
        if (it != peak_flops.end()) return it->second;
    }
    throw sim::InputError("accelerator '" + id + "' has no peak for " + dtype_name(d));
}

const char* network_name(NetworkBackend n) { return n == NetworkBackend::Simgrid ? "simgrid" : "analytical"; }

const char* topology_name(ScaleOutTopology t) {
    switch (t) {
        case ScaleOutTopology::FatTree2: return "fat-tree-2";
        case ScaleOutTopology::FatTree3: return "fat-tree-3";
        case ScaleOutTopology::RailOptimized: return "rail-optimized";
        case ScaleOutTopology::Dragonfly: return "dragonfly";
    }
    return "?";
}

}  // namespace fathom::hardware
