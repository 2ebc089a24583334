#pragma once
// A serving plan: how a model is served on a cluster (replicas of TP x PP devices, optionally split
// into prefill and decode pools), by which engine and batching policy, under which traffic and
// SLOs. Plain data, filled by scenarios/ from the `serving`, `traffic` and `slo` sections.
#include "hardware/spec.h"
#include "models/program/layer_program.h"
#include "sim/enum_names.h"
#include "workloads/serving/autoscale.h"
#include "workloads/serving/lora.h"
#include "workloads/serving/speculative.h"
#include "workloads/serving/traffic/traffic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fathom::workloads::serving {

// One pool of identical replicas (engine instances), each a model on tp x pp devices.
//
// Expert parallelism (ep > 1, tp = pp = 1): the replicas are the data-parallel attention ranks of
// engines whose mixture-of-experts layers are expert-parallel over `ep` consecutive GPUs (SGLang
// --enable-dp-attention with --ep-size, vLLM --data-parallel-size with --enable-expert-parallel).
// Each GPU schedules its own requests and runs attention, the dense layers and the output head on
// them alone; its MoE layers dispatch every routed token to the GPU holding the expert and combine
// the results (all-to-all over the EP group, `dispatcher`). Each GPU holds
// (experts + redundant_experts) / ep experts of every MoE layer (EPLB's redundant copies), whole.
// The ranks of an EP group step together (each MoE layer waits for all of them); fathom prices each
// rank's iteration as if the other ranks ran a batch of the same shape.
struct PoolLayout {
    int tp = 1;
    int pp = 1;
    int replicas = 1;
    int ep = 1;
    int redundant_experts = 0;
    models::MoeDispatcher dispatcher = models::MoeDispatcher::AllToAll;
    std::string accelerator_id;             // "" = the cluster's accelerator
    hardware::AcceleratorSpec accelerator;  // resolved from accelerator_id by the scenario loader

    int64_t gpus() const { return int64_t{tp} * pp * replicas; }  // 64 bits: each fits an int, the product need not
};

enum class Preemption { Recompute, Swap };
constexpr auto enum_names(Preemption) {
    return sim::name_table<Preemption>({{Preemption::Recompute, "recompute"}, {Preemption::Swap, "swap"}});
}

// Properties of the serving engine (catalog: workloads/engines/*.yaml, each value with its source).
struct EngineSettings {
    std::string preset;                  // engine id the values came from ("" = fathom defaults)
    double iteration_overhead_s = 0;     // CPU scheduling and launch time per iteration
    double per_sequence_overhead_s = 0;  // CPU time per running sequence per iteration
    double runtime_reserved_bytes = 0;   // per device: CUDA context, NCCL buffers, CUDA graphs
    // Two-batch overlap (SGLang --enable-two-batch-overlap, DeepSeek's inference): each iteration's
    // batch runs as two halves, one half's expert all-to-all beside the other half's compute, so a
    // MoE layer takes max(compute, communication) of the two halves instead of their sum.
    bool two_batch_overlap = false;
    // The engine's own peer-memory all-reduce for single-node tensor-parallel all-reduces up to the
    // fabric's size limit (vLLM, SGLang, TensorRT-LLM custom all-reduce; hardware/collectives/
    // peer_allreduce.cpp), where the fabric has one calibrated; false: NCCL's algorithms only.
    bool custom_allreduce = false;
    // Multi-step scheduling (vLLM V0 --num-scheduler-steps): decode-only batches run this many
    // iterations per scheduling round, the CPU time per iteration paid once a round.
    int64_t scheduler_steps = 1;
};

struct BatchingSettings {
    std::string policy = "sarathi";         // registry name (batching/policy.h)
    int64_t max_num_seqs = 256;             // running sequences at most
    int64_t max_num_batched_tokens = 8192;  // tokens per iteration at most (the chunked-prefill budget)
    int64_t chunk_size = 512;               // splitfuse: prefill tokens of one prompt per iteration at most
    int64_t max_model_len = 0;              // longest prompt + output admitted (0: the model's context)
};

struct KvSettings {
    int64_t block_size = 16;              // tokens per paged KV block
    double gpu_memory_utilization = 0.9;  // share of device memory the engine may use
    // true: gpu_memory_utilization is the KV cache's share of the memory left after weights,
    // activations and the runtime reserve (TensorRT-LLM's free_gpu_memory_fraction).
    bool fraction_of_free = false;
    double watermark = 0.01;  // share of blocks kept free when admitting new requests
    hardware::Dtype dtype = hardware::Dtype::bf16;
    Preemption preemption = Preemption::Recompute;
    bool prefix_caching = false;           // reuse cached blocks of shared prompt prefixes (radix tree, LRU)
    bool shared_prefix_attention = false;  // decode attention reads a prefix shared in the batch once
    // Admission reserves the blocks of the whole request, prompt + output (TensorRT-LLM's
    // GUARANTEED_NO_EVICT capacity scheduler): running sequences never run out of KV, so never get
    // preempted, at the price of fewer admitted. false: blocks allocated as tokens are computed.
    bool reserve_output = false;
    // KV offloading (kv_tier.h): bytes of host memory per GPU holding the blocks the GPU's prefix
    // cache evicts, loaded back over the host link when a prompt continues with them (0: none).
    double offload_bytes = 0;
    // An NVMe tier below it (bytes per GPU of the nodes' SSDs, cluster.ssd): the blocks host memory
    // drops, loaded back at the drives' read bandwidth shared by the node's GPUs (0: none).
    double offload_ssd_bytes = 0;
    // A KV store every replica shares over the network (LMCache's server, Mooncake's store): bytes
    // in all, holding whole blocks (every GPU's share) that any replica computed; a prompt that
    // continues past the GPU's and its own tiers' hits with blocks held there loads them over its
    // GPUs' scale-out NICs (0: none).
    double store_bytes = 0;
    bool any_tier() const { return offload_bytes > 0 || store_bytes > 0; }
    // How the tier's blocks come back to the GPU: "memcpy", one cudaMemcpyAsync per block, layer
    // and K or V tensor (vLLM's OffloadingConnector: ops.swap_blocks per layer), each adding the
    // host link's copy_latency; "kernel", one kernel reading pinned host memory (LMCache, SGLang
    // HiCache's io_backend kernel), the link's bandwidth alone ("": not stated).
    std::string offload_copy;
    // When a load runs: "blocking", before the iteration that admits the request (LMCache's
    // connector loads in the forward pass before the layers run); "layerwise", beside that
    // iteration, each layer's compute waiting for its layer's blocks (SGLang HiCache's
    // layer_transfer_counter); "async", on its own stream while iterations go on without the
    // request, which is admitted once its blocks are in (vLLM's OffloadingConnector:
    // WAITING_FOR_REMOTE_KVS) ("": not stated).
    std::string offload_load;
    // The tiers' unit of a load, in tokens (0: a block): a hit loads whole units counted from the
    // prompt's start (LMCache's chunk_size, 256 by default, lmcache/v1/config.py); the tokens after
    // the last whole unit are computed.
    int64_t offload_chunk = 0;
    // How the tiers' stores run: "async", on a stream of their own beside the iterations (vLLM's
    // OffloadingConnector, SGLang's write-through); "blocking", the iteration's new blocks copied
    // to host memory over the host link before the next one starts (LMCache's connector stores in
    // wait_for_save, at the end of the forward).
    std::string offload_store = "async";
    // Whether the tiers keep the blocks of generated tokens (a multi-turn conversation's answers):
    // vLLM's OffloadingConnector stores every newly computed full block; LMCache only the prompt's
    // (save_decode_cache, False by default, lmcache/v1/config.py).
    bool offload_store_decode = true;
};

enum class ArrivalMode { Open, Closed };  // open: the source's arrival times; closed: N clients

struct TrafficPlan {
    ArrivalMode mode = ArrivalMode::Open;
    SyntheticTraffic synthetic;
    std::string trace;            // a trace file replaces the generator when set
    std::string dataset;          // the catalog dataset the prompt and output lengths came from ("": none)
    int64_t concurrency = 0;      // closed loop: clients
    double think_time_s = 0;      // closed loop: pause between a reply and the next request
    int64_t warmup_requests = 0;  // requests excluded from the aggregates (their load counts)
};

// SLOs of one class of requests (a trace's slo_class column names the class of each row).
struct SloClass {
    std::string name;
    double ttft_s = 0;  // 0: no TTFT constraint for this class
    double tpot_s = 0;  // 0: no TPOT constraint for this class
};

struct SloSettings {
    double ttft_s = 0;               // 0: no TTFT constraint
    double tpot_s = 0;               // 0: no TPOT constraint
    double target_attainment = 0.9;  // capacity: share of requests that must meet both
    // Per-class SLOs (slo.classes); a request of a class not listed here (or of the default class)
    // is held to ttft_s / tpot_s above.
    std::vector<SloClass> classes;
};

// `fathom capacity`: the highest request rate whose SLO attainment meets slo.target_attainment,
// found by bisection between min_rate and max_rate, every rate simulated with `seeds` seeds.
struct CapacitySettings {
    double min_rate = 0.1;  // requests/s
    double max_rate = 0;    // 0: from the replicas' offline throughput
    int seeds = 3;
    double tolerance = 0.02;  // stop when the bracket is this narrow (relative)
};

// Disaggregated serving measured one pool at a time (the per-phase method of DeepSeek's and
// SGLang's large-scale EP reports): the other pool has capacity enough never to limit it.
//   prefill  only the prefill pool runs; a request ends with its first token (its KV handed to an
//            unlimited decode pool at once);
//   decode   only the decode pool runs; a request arrives with its prompt's KV in place and its
//            first token sampled (an unlimited prefill pool), and decodes the rest.
enum class PoolIsolation { None, Prefill, Decode };
constexpr auto enum_names(PoolIsolation) {
    return sim::name_table<PoolIsolation>(
        {{PoolIsolation::None, "none"}, {PoolIsolation::Prefill, "prefill"}, {PoolIsolation::Decode, "decode"}});
}

// What a pool does with the requests it serves.
//   aggregated  prefills and decodes them (a plan without disaggregation)
//   prefill     computes the prompt and samples the first token, then hands the KV cache on
//   decode      receives a prompt's KV cache and generates the remaining tokens
enum class PoolRole { Aggregated, Prefill, Decode };
constexpr auto enum_names(PoolRole) {
    return sim::name_table<PoolRole>(
        {{PoolRole::Aggregated, "aggregated"}, {PoolRole::Prefill, "prefill"}, {PoolRole::Decode, "decode"}});
}

// One pool of a plan as ServingPlan::pools() lists it: the one place that tells the aggregated,
// disaggregated and isolated cases apart.
struct Pool {
    PoolRole role = PoolRole::Aggregated;
    const PoolLayout* layout = nullptr;  // into the plan: valid while the plan lives unchanged
    // false: isolated away (serving.disaggregation.isolate names the other pool): a pool of
    // unlimited capacity that is not simulated and holds no GPUs of the cluster.
    bool simulated = true;
    int64_t gpus = 0;      // GPUs the plan holds for it: tp x pp x replicas, 0 when not simulated
    const char* key = "";  // where a scenario states it: "serving" or "serving.disaggregation.<role>"
};

struct ServingPlan {
    PoolLayout replica;                 // aggregated serving: `replicas` replicas of tp x pp
    std::optional<PoolLayout> prefill;  // disaggregated: prefill and decode pools (replica unused)
    std::optional<PoolLayout> decode;
    models::KernelStack kernels;  // GEMM (weight) dtype; attention reads the KV dtype
    EngineSettings engine;
    BatchingSettings batching;
    KvSettings kv;
    SpeculativeSettings speculative;
    LoraSettings lora;
    AutoscaleSettings autoscale;         // the aggregated pool's replicas follow the traffic
    std::string router = "round-robin";  // registry name (router.h)
    TrafficPlan traffic;
    SloSettings slo;
    CapacitySettings capacity;
    PoolIsolation isolate = PoolIsolation::None;  // disaggregated: simulate one pool alone
    // Mixture of experts: the busiest expert-parallel rank's routed rows over the mean (1: balanced,
    // as EPLB's placement aims for).
    double expert_load = 1.0;

    bool disaggregated() const { return prefill.has_value(); }
    // The pools in request order: the aggregated pool alone, or the prefill then the decode pool
    // (with `isolate`, the other one not simulated). A stray `isolate` without disaggregation lists
    // the aggregated pool (check_serving_plan reports the key).
    std::vector<Pool> pools() const;
    int64_t gpus() const;  // of the simulated pools
};

}  // namespace fathom::workloads::serving
