// Serving memory (workloads/serving/serving_memory.h): the KV pool as vLLM and TensorRT-LLM size
// it from the device's reported total, and quantized weights' widths.
#include "workloads/serving/serving_memory.h"

#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

using namespace fathom;
using namespace fathom::workloads::serving;

TEST_CASE("KV capacity follows vLLM's memory accounting", "[serving]") {
    // Llama 3 8B bf16 on an H100 80GB at 0.9 utilization. The device's total is what the driver
    // reports, 85,017,493,504 B (79.18 GiB; vLLM's own log on an H100, PR #10511: "total_gpu_memory
    // 79.22GiB ... the current vLLM instance can use 71.29GiB"): 76.52 GB usable, 16.06 GB of
    // weights (8.03B parameters x 2 bytes), a KV token of 131072 bytes (32 layers x 2 x 8 heads x
    // 128 x 2): (76.52 - 16.06 - activations) / 131072 B = ~450k tokens.
    const auto& cat = testing::source_catalog();
    PoolLayout pool;
    pool.accelerator = cat.accelerator("h100-sxm-80gb");
    const ReplicaMemory m = replica_memory(cat.model("llama3-8b"), pool, models::KernelStack{}, KvSettings{},
                                           BatchingSettings{}, EngineSettings{});
    CHECK(m.weight_bytes == Approx(16.06e9).epsilon(0.01));
    CHECK(m.kv_bytes_per_token == 131072);
    const double tokens = static_cast<double>(m.kv_blocks) * 16;
    CHECK(m.usable_bytes == Approx(71.29 * 1024 * 1024 * 1024).epsilon(0.001));
    CHECK(tokens == Approx((0.9 * 85017493504.0 - m.weight_bytes - m.activation_bytes) / 131072).epsilon(0.001));
}

TEST_CASE("KV capacity as TensorRT-LLM sizes it: a share of the memory free after loading", "[serving]") {
    // Same model and device as above with memory_fraction_of: free. TensorRT-LLM gives the KV cache
    // free_gpu_memory_fraction (0.9) of what is left once weights and activations are loaded:
    // (85.02 GB - 16.06 GB - activations) x 0.9 = ~62.1 GB less 0.9 x activations, more than vLLM's
    // 76.52 GB - 16.06 GB - activations = ~60.5 GB less the activations.
    const auto& cat = testing::source_catalog();
    PoolLayout pool;
    pool.accelerator = cat.accelerator("h100-sxm-80gb");
    KvSettings kv;
    kv.fraction_of_free = true;
    const ReplicaMemory m =
        replica_memory(cat.model("llama3-8b"), pool, models::KernelStack{}, kv, BatchingSettings{}, EngineSettings{});
    const double tokens = static_cast<double>(m.kv_blocks) * 16;
    CHECK(tokens == Approx((85017493504.0 - m.weight_bytes - m.activation_bytes) * 0.9 / 131072).epsilon(0.001));
    const ReplicaMemory v = replica_memory(cat.model("llama3-8b"), pool, models::KernelStack{}, KvSettings{},
                                           BatchingSettings{}, EngineSettings{});
    CHECK(m.kv_blocks > v.kv_blocks);
}

TEST_CASE("fp4 weights take 0.5625 bytes a parameter (NVFP4's block scales) and leave the rest to the KV cache",
          "[serving]") {
    // Llama 3 70B on one B200: its transformer layers' weights are 68.45e9 parameters (the embedding
    // and output layers, 2 x 1.05e9, stay bf16). fp8 -> fp4 saves 68.45e9 x (1 - 0.5625) = 29.95 GB,
    // which becomes KV cache: 29.95e9 / 327,680 bytes a token (80 layers x 2 x 8 KV heads x 128 x
    // 2 bytes) = 91.4k more tokens. B200's fp4 tensor rate is twice its fp8 one.
    const auto& cat = testing::source_catalog();
    PoolLayout pool;
    pool.accelerator = cat.accelerator("b200");
    CHECK(pool.accelerator.peak(hardware::Dtype::fp4) == Approx(2 * pool.accelerator.peak(hardware::Dtype::fp8)));
    models::KernelStack fp8, fp4;
    fp8.gemm_dtype = hardware::Dtype::fp8;
    fp4.gemm_dtype = hardware::Dtype::fp4;
    const auto& m = cat.model("llama3-70b");
    const ReplicaMemory a = replica_memory(m, pool, fp8, KvSettings{}, BatchingSettings{}, EngineSettings{});
    const ReplicaMemory b = replica_memory(m, pool, fp4, KvSettings{}, BatchingSettings{}, EngineSettings{});
    const double layer_params = a.weight_bytes - 2.0 * (m.embedding_params(0) + m.output_params());  // fp8: 1 B each
    CHECK(b.weight_bytes == Approx(2.0 * (m.embedding_params(0) + m.output_params()) + 0.5625 * layer_params));
    CHECK(a.weight_bytes - b.weight_bytes == Approx(29.95e9).epsilon(0.01));
    const double more_tokens = static_cast<double>(b.kv_blocks - a.kv_blocks) * 16;
    CHECK(more_tokens == Approx(29.95e9 / 327680).epsilon(0.01));
}
