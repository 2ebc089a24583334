#pragma once
// A pipeline test bed whose answers are easy to derive: a small model whose embedding and output
// layer are negligible (vocab 128) on a 4-GPU node whose links are so fast, and kernel launches
// free, that communication costs ~0. Memory bandwidth is high so the optimizer step (~1 GB of
// states per stage) is ~0.1% of the step.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "tests/support/model_fixture.h"
#include "workloads/training/training_plan.h"

#include <string>

namespace fathom::testing {

inline models::ModelSpec pipeline_model() {
    models::ModelSpec m = dense_model(8, 2048, 16, 16, 8192, 128, models::Activation::Gelu);
    m.id = "pipe-test";
    m.name = "pipeline test model";
    m.max_seq_len = 2048;
    m.norm = models::Norm::LayerNorm;
    m.position = models::PositionEmbedding::Rope;
    return m;
}

inline hardware::ClusterSpec pipeline_cluster() {
    hardware::ClusterSpec c;
    auto& a = c.accelerator;
    a.id = "pipe-gpu";
    a.peak_flops[hardware::Dtype::bf16] = 1000e12;
    a.memory_capacity = 1e12;
    a.memory_bandwidth = 30e12;
    a.compute_units = 100;
    a.launch_overhead = 0;
    a.calibration.gemm_efficiency[hardware::Dtype::bf16] = 0.8;
    a.calibration.gemm_tile_m = 128;
    a.calibration.gemm_tile_n = 256;
    a.calibration.gemm_k_half = 64;
    a.calibration.memory_efficiency = 0.9;
    a.calibration.attention_fwd_efficiency = 0.5;
    a.calibration.attention_bwd_efficiency = 0.4;
    a.calibration.attention_seq_half = 512;
    c.nodes = 1;
    c.gpus_per_node = 4;
    c.scale_up.id = "infinite";
    c.scale_up.bandwidth_per_gpu = 1e18;
    c.scale_up.link_bandwidth = 1e18;
    c.scale_up.busbw_efficiency = 1.0;
    c.nic.id = "infinite";
    c.nic.bandwidth = 1e18;
    c.nic.efficiency = 1.0;
    c.nics_per_node = 4;
    return c;
}

inline workloads::TrainingPlan pipeline_plan(int vp, const std::string& schedule) {
    workloads::TrainingPlan p;
    p.layout.tp = 1;
    p.layout.dp = 1;
    p.layout.pp = 4;
    p.layout.vp = vp;
    p.training.micro_batch = 4;
    p.training.global_batch = 32;  // m = 32 / (dp 1 x micro-batch 4) = 8 micro-batches
    p.training.seq_len = 2048;
    p.training.schedule = schedule;
    return p;
}

}  // namespace fathom::testing
