#pragma once
// Plain data describing hardware: accelerators, scale-up fabrics, NICs, PCIe, SSDs and the
// cluster built from them. No behaviour. All quantities are in SI base units (bytes, bytes/s,
// FLOP/s, seconds, watts); bandwidths are per direction. These structs are filled from the YAML
// catalog by scenarios/ (every number there carries its source) and read by models/ (roofline
// costs) and hardware/network (collective costs).
#include "sim/enum_names.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fathom::hardware {

// fp4: 4-bit floating point with a block scale (NVIDIA NVFP4: one fp8 scale per 16 values;
// AMD/OCP MXFP4: one 8-bit scale per 32), stored as dtype_bytes(fp4) = 0.5625 bytes a value.
// int4: 4-bit integer weights with a 16-bit scale per group of 128 (AWQ's and GPTQ's default
// group size, as Marlin runs them): 0.515625 bytes a value. Weight-only: no device computes in it
// here (W4A16 dequantizes to 16 bits in the GEMM's kernel).
enum class Dtype { fp32, tf32, bf16, fp16, fp8, int8, fp4, int4 };
constexpr auto enum_names(Dtype) {
    return sim::name_table<Dtype>({{Dtype::fp32, "fp32"},
                                   {Dtype::tf32, "tf32"},
                                   {Dtype::bf16, "bf16"},
                                   {Dtype::fp16, "fp16"},
                                   {Dtype::fp8, "fp8"},
                                   {Dtype::int8, "int8"},
                                   {Dtype::fp4, "fp4"},
                                   {Dtype::int4, "int4"}});
}
// Bytes per element (fp8/int8 = 1, bf16/fp16 = 2, fp32/tf32 = 4).
double dtype_bytes(Dtype d);

// Fractions of datasheet peaks that real kernels reach on this device. Properties of the device
// and its software stack, set once per device from microbenchmarks (sources in the catalog file).
struct AcceleratorCalibration {
    std::map<Dtype, double> gemm_efficiency;     // large-GEMM TFLOP/s / peak, per dtype
    double attention_fwd_efficiency = 0;         // long-sequence flash-attention forward TFLOP/s / bf16 peak
    double attention_bwd_efficiency = 0;         // long-sequence flash-attention backward TFLOP/s / bf16 peak
    double attention_seq_half = 0;               // KV length at which attention reaches half that efficiency
    double attention_fa2_relative = 1;           // FlashAttention-2-class kernels' throughput / the above
    double attention_mla_decode_efficiency = 0;  // absorbed MLA decode (FlashMLA) TFLOP/s / bf16 peak
                                                 // (0: attention_fwd_efficiency)
    double memory_efficiency = 0;                // achieved HBM bandwidth / peak for streaming kernels
    // DeepGEMM's fp8 kernels (models::GemmKernel::DeepGemm), where calibrated: TFLOP/s / fp8 peak
    // at full waves and long K, and the K at which its per-tile fixed cost halves that (0: no
    // DeepGEMM class on this device; such GEMMs are priced as the vendor library's).
    double deepgemm_efficiency = 0;
    double deepgemm_k_half = 0;
    // Weight-only quantized GEMMs (models::GemmKernel::WeightOnly: Marlin, Machete), where
    // measured: their compute-bound throughput relative to the 16-bit library GEMM of the same
    // shape (the dequantization's work in the main loop); 0: not measured, the w4a16 and w8a16
    // formats are refused on this device.
    double weight_only_efficiency = 0;
    // Their memory-bound side, where measured: the rate they stream their packed weights at,
    // relative to the 16-bit library GEMM's memory efficiency (a decode's weight-only GEMM is slower
    // than its bytes say); 0: not measured, the bytes at the library GEMM's rate.
    double weight_only_memory_efficiency = 0;
    // Grouped (expert) GEMMs, where measured: throughput relative to the dense GEMM of the same
    // FLOPs, per dtype, as c (1 - exp(-max(rows, 128) / h)) with rows the rows each expert
    // receives, c the ceiling (grouped_gemm_relative) and h the fill scale
    // (grouped_gemm_rows_scale); a dtype without a curve is priced as the dense GEMM.
    std::map<Dtype, double> grouped_gemm_relative, grouped_gemm_rows_scale;
    double grouped_relative(Dtype d, double rows) const;
    double sustained_clock = 1;  // tensor throughput under sustained training load
                                 // (power/thermal clock reduction) / short-kernel throughput
    double serving_clock = 0;    // the same under serving load (decode iterations are
                                 // memory-bound and draw less power); 0: sustained_clock
    double clock_for_serving() const { return serving_clock > 0 ? serving_clock : sustained_clock; }
    // The same two factors for ops priced from a measured table (models/cost/calibration_table.h),
    // whose kernels were timed at the measuring device's own power-capped clocks: the rates under
    // load relative to the table's, where the two above are relative to the catalog's short-kernel
    // efficiencies (0: no table; the ops the table does not cover keep the two above).
    double table_sustained_clock = 0, table_serving_clock = 0;
    int gemm_tile_m = 128;  // output tile of the dominant GEMM kernels
    int gemm_tile_n = 128;
    double gemm_k_half = 0;      // K at which a GEMM's pipeline reaches half of its
                                 // asymptotic efficiency loss (prologue/epilogue cost)
    double gemm_k_half_fp8 = 0;  // the same for fp8 GEMMs (0: gemm_k_half): twice the
                                 // K per instruction, the same fixed cost per tile
    double k_half(Dtype d) const { return d == Dtype::fp8 && gemm_k_half_fp8 > 0 ? gemm_k_half_fp8 : gemm_k_half; }
    // Compute beside communication: how many times as long a kernel of each class runs while a
    // collective's kernels (NCCL's 16-32 channels, one CTA each) hold SMs and HBM bandwidth beside
    // it, over its time alone (1: no slowdown). Catalog `compute_beside_comm`.
    struct BesideComm {
        double gemm = 1, gemm_fp8 = 1, attention = 1, memory_bound = 1;
    } beside_comm;
};

struct AcceleratorSpec {
    std::string id;  // e.g. "h100-sxm-80gb" (the ids of measured-format.md)
    std::string name;
    std::string vendor;
    std::map<Dtype, double> peak_flops;  // dense, FLOP/s
    double memory_capacity = 0;          // bytes the runtime reports as the total (what frameworks size against)
    double memory_bandwidth = 0;         // bytes/s
    int compute_units = 0;               // SMs / CUs / cube cores
    double l2_cache = 0;                 // bytes
    double launch_overhead = 0;          // seconds per kernel
    double tdp = 0;                      // W
    std::string scale_up;                // default intra-node fabric id
    std::string scale_out_nic;           // NIC id of its reference system (empty: not stated)
    std::string host_link;               // PCIe id of its host link (empty: not stated)
    AcceleratorCalibration calibration;
    std::string calibration_table;  // path of a fitted per-op cost table, empty if none
    // What the device's constants rest on: "measured" (this project's GPU campaigns and training
    // fits), "published" (fitted on published microbenchmarks and measurements), "estimated" (key
    // constants carried from another device or guessed); its source says which.
    std::string device_model;
    std::string device_model_source;

    double peak(Dtype d) const;  // falls back bf16 -> fp16 for dtypes the device lacks
    bool has(Dtype d) const { return peak_flops.count(d) > 0; }
};

enum class ScaleUpTopology { Switched, FullMesh };
constexpr auto enum_names(ScaleUpTopology) {
    return sim::name_table<ScaleUpTopology>(
        {{ScaleUpTopology::Switched, "switched"}, {ScaleUpTopology::FullMesh, "full_mesh"}});
}

struct ScaleUpSpec {
    std::string id;
    std::string name;
    ScaleUpTopology topology = ScaleUpTopology::Switched;
    double bandwidth_per_gpu = 0;  // bytes/s per direction, all of a GPU's links
    double link_bandwidth = 0;     // bytes/s per direction, one peer link
    double latency = 0;            // s, one-way small message
    int max_domain_size = 8;
    std::string family;           // the fabric id this one is a variant of (nvlink4-h800: nvlink4-nvswitch), or empty
    bool nvls = false;            // in-switch reduction (NVLink SHARP)
    double busbw_efficiency = 0;  // achievable ring bus bandwidth / bandwidth_per_gpu (nccl-tests)
    double nvls_busbw_efficiency = 0;  // achievable NVLS all-reduce bus bandwidth / bandwidth_per_gpu
    double step_latency = 0;           // s, per algorithm step (NCCL protocol + sync), calibrated
    double nvls_latency = 0;           // s, start-up of one NVLS call beyond the launch, calibrated
    // The collective library's pipeline fill (see pipeline_fill() in hardware/collectives), calibrated.
    double fill_fraction = 0;  // fill time / bandwidth time while chunks grow with the message
    double fill_max = 0;       // bus bytes: the fill once chunks reach their largest size
    // Serving engines' own peer-memory all-reduce (vLLM, SGLang and TensorRT-LLM custom all-reduce
    // kernels over NVLink peer mappings, hardware/collectives/peer_allreduce.cpp), calibrated: time =
    // latency + rank_latency x ranks + bus bytes / bandwidth, for messages up to max_bytes. 0: none.
    double peer_allreduce_latency = 0;       // s
    double peer_allreduce_rank_latency = 0;  // s per rank
    double peer_allreduce_bandwidth = 0;     // achievable bus bytes/s
    double peer_allreduce_max_bytes = 0;     // largest message the engines send through it
};

struct NicSpec {
    std::string id;
    std::string name;
    double bandwidth = 0;       // bytes/s per direction
    double latency = 0;         // s, NIC to NIC through one switch
    double switch_latency = 0;  // s per switch hop
    std::string link;           // link layer: "infiniband" or "roce"
    double efficiency = 0;      // achievable fraction of bandwidth in collectives, calibrated
};

struct PcieSpec {
    std::string id;
    std::string name;
    double bandwidth = 0;  // bytes/s per direction
    double latency = 0;
    double efficiency = 0;  // achievable fraction (copy engine; 0: not given, the line rate)
    // Seconds each cudaMemcpyAsync over the link adds beyond its bytes (the driver's submission and
    // the copy engine's setup; measured; 0: not given).
    double copy_latency = 0;
    // Bytes/s a large copy-engine copy reaches over the link.
    double achievable_bandwidth() const { return bandwidth * (efficiency > 0 ? efficiency : 1.0); }
};

struct SsdSpec {
    std::string id;
    std::string name;
    double read_bandwidth = 0;
    double write_bandwidth = 0;
    double read_latency = 0;
    double capacity = 0;
};

// A shared file system or object store the whole cluster checkpoints to (Lustre, GPFS, VAST,
// Tectonic): aggregate bandwidths over all clients, and what one node's client reaches at most.
// Metadata latency is not modelled (a checkpoint is a few large files per rank).
struct FileSystemSpec {
    std::string id;
    std::string name;
    double write_bandwidth = 0;  // aggregate, all clients together
    double read_bandwidth = 0;
    double client_bandwidth = 0;  // one node's client, each direction; 0: not stated (no bound)
    double capacity = 0;          // 0: not stated (not checked)
};

// Failure rates of a fleet, as published: the interruptions of each root cause over an exposure of
// GPU-hours (a job's rate for a cause is count / exposure x its GPUs: a node-level cause scales with
// the job's GPUs as its nodes do, at the source's GPUs per node).
struct FailureCauseSpec {
    std::string name;      // "faulty_gpu"
    std::string category;  // "gpu", "memory", "network", "host", "software", ...
    double count = 0;      // interruptions in the exposure
    std::string source;

    // Whether the failure takes its node out for repair: hardware and maintenance causes do; a
    // software or dependency failure, or one of unknown cause (an NCCL watchdog timeout), is mended
    // by the restart.
    bool takes_node() const { return category != "dependency" && category != "software" && category != "unknown"; }
};
struct FailureRatesSpec {
    std::string id;
    std::string name;
    std::string accelerator;  // the device of the fleet the rates were measured on
    double exposure_gpu_hours = 0;
    std::vector<FailureCauseSpec> causes;

    // Failures per hour of a job of `gpus` accelerators, cause by cause.
    double per_hour(const FailureCauseSpec& c, double gpus) const { return c.count / exposure_gpu_hours * gpus; }
};

enum class ScaleOutTopology { FatTree2, FatTree3, RailOptimized, Dragonfly };
// In the order the key reference lists them (the default first).
constexpr auto enum_names(ScaleOutTopology) {
    return sim::name_table<ScaleOutTopology>({{ScaleOutTopology::RailOptimized, "rail-optimized"},
                                              {ScaleOutTopology::FatTree2, "fat-tree-2"},
                                              {ScaleOutTopology::FatTree3, "fat-tree-3"},
                                              {ScaleOutTopology::Dragonfly, "dragonfly"}});
}

// How collectives are costed: closed forms (the default, the search's fast path), or flows on the
// topology graph shared in SimGrid (hardware/network/simgrid_network.h).
enum class NetworkBackend { Analytical, Simgrid };
constexpr auto enum_names(NetworkBackend) {
    return sim::name_table<NetworkBackend>(
        {{NetworkBackend::Analytical, "analytical"}, {NetworkBackend::Simgrid, "simgrid"}});
}

// A cluster: `nodes` nodes of `gpus_per_node` accelerators on one scale-up fabric each, joined by
// a scale-out network of `nics_per_node` NICs per node.
struct ClusterSpec {
    AcceleratorSpec accelerator;
    int nodes = 1;
    int gpus_per_node = 8;
    ScaleUpSpec scale_up;
    NicSpec nic;
    int nics_per_node = 8;
    ScaleOutTopology topology = ScaleOutTopology::RailOptimized;
    double oversubscription = 1.0;  // leaf uplink oversubscription (>= 1)
    int nodes_per_leaf = 16;        // nodes (or rail groups) under one leaf switch
    std::string routing = "ecmp";   // routing strategy of the flow-level network (hardware/routing)
    NetworkBackend network = NetworkBackend::Analytical;
    PcieSpec pcie;
    std::optional<SsdSpec> ssd;
    int ssds_per_node = 1;
    std::optional<FileSystemSpec> storage;  // the shared file system, when the cluster has one
    double host_memory = 0;                 // a node's host DRAM, bytes (0: not stated)
    // The serving engine's peer-memory all-reduce may run single-node all-reduces (set from the
    // serving plan's serving.custom_allreduce; training collectives are NCCL's).
    bool peer_allreduce = false;

    int gpus() const { return nodes * gpus_per_node; }
    // Scale-out bandwidth available to one GPU, bytes/s per direction, before efficiency.
    double nic_bandwidth_per_gpu() const { return nic.bandwidth * nics_per_node / gpus_per_node; }
    // What one node's NICs together reach on a large transfer (a checkpoint, a reshard), bytes/s.
    double node_nic_achievable() const { return nic.bandwidth * nics_per_node * nic.efficiency; }
};

}  // namespace fathom::hardware
