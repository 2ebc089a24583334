#pragma once
// The importers of scenarios/imports/imports.h, one file each; imports.cpp registers them.
#include "scenarios/imports/imports.h"

namespace fathom::scenarios::imports {

Importer vllm_bench_importer();      // serving_bench.cpp
Importer sglang_bench_importer();    // serving_bench.cpp
Importer nccl_importer();            // nccl_tests.cpp
Importer megatron_log_importer();    // megatron_log.cpp
Importer genai_perf_importer();      // genai_perf.cpp
Importer aiperf_importer();          // genai_perf.cpp
Importer nemo_log_importer();        // nemo_log.cpp
Importer torch_profiler_importer();  // kernel_profile.cpp
Importer nsys_kernels_importer();    // kernel_profile.cpp

}  // namespace fathom::scenarios::imports
