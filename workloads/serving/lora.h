#pragma once
// Multi-LoRA serving (papers.md F21; S-LoRA, Punica): many low-rank adapters over one base model.
// Each request names an adapter (a trace's `adapter` column, or a draw from a Zipf popularity over
// `adapters` of them); the base weights are shared and each adapted projection W (k -> n) adds
// (x A) B for the adapter of each token, unmerged.
//
// The model, as vLLM and SGLang run it:
//  - GPU slots: `max_loras` adapters at most are resident on the GPUs, each slot sized for
//    `max_rank` (vLLM --max-loras / --max-lora-rank, SGLang --max-loras-per-batch): their memory is
//    allocated at start-up, out of the KV cache's share. Every adapter lives in host memory (vLLM's
//    CPU LRU cache, S-LoRA's main-memory store), so a miss loads the adapter into a free slot, or
//    into the least recently used slot no running sequence uses, over the device's host link,
//    before the iteration's forward pass (vLLM and SGLang load synchronously).
//  - Admission: the running sequences use at most `max_loras` distinct adapters. A waiting request
//    whose adapter is not among them, with no slot left, waits: `skip` admits later requests past
//    it (vLLM V1 keeps the skipped ones at the queue's front), `fifo` stops admitting (SGLang).
//  - Cost: every adapted GEMM of m tokens gets the batched LoRA kernels (Punica's SGMV shrink and
//    expand): per distinct adapter d of the batch, a GEMM of m/d tokens x (slices r) x k that reads
//    its A and one of m/d x n x r that reads its B (models/llm/lora.h, lora_serving_program). Fused
//    projections have one A per slice (q, k, v; gate, up). Tensor parallelism shards the adapters as
//    their projections (A replicated and B split for column-parallel ones, A split and B
//    replicated for row-parallel ones, the partial products summed by the projection's own
//    all-reduce): no collective of its own.
//  - Not modelled: adapters on mixture-of-experts layers, the embedding and output head; disk loads
//    into the host cache (every adapter is in host memory); S-LoRA's unified paging of adapters in
//    the KV pool (slots are static here, as vLLM's and SGLang's).
#include "sim/enum_names.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace fathom::models {
struct ModelSpec;
}

namespace fathom::workloads::serving {

enum class LoraAdmission { Skip, Fifo };
constexpr auto enum_names(LoraAdmission) {
    return sim::name_table<LoraAdmission>({{LoraAdmission::Skip, "skip"}, {LoraAdmission::Fifo, "fifo"}});
}

enum class LoraModules { All, Attention };
constexpr auto enum_names(LoraModules) {
    return sim::name_table<LoraModules>({{LoraModules::All, "all"}, {LoraModules::Attention, "attention"}});
}

struct LoraSettings {
    int64_t adapters = 0;   // distinct adapters the traffic uses (0: no LoRA)
    int64_t rank = 0;       // r of every adapter
    int64_t max_rank = 0;   // a GPU slot's rank (0: rank)
    int64_t max_loras = 1;  // GPU slots: distinct adapters the running sequences use at most
    double popularity = 1;  // Zipf exponent of adapter popularity (0: uniform)
    LoraAdmission admission = LoraAdmission::Skip;
    LoraModules modules = LoraModules::All;

    bool enabled() const { return adapters > 0; }
    int64_t slot_rank() const { return max_rank > 0 ? max_rank : rank; }
};

// Bytes of one adapter of rank `rank` on one device of a tp x pp replica: its fullest stage's
// layers (ceil(layers / pp)), bf16.
double lora_adapter_bytes(const models::ModelSpec& model, int tp, int pp, const LoraSettings& lora, int64_t rank);

// Zipf popularity over adapters 1..n: P(i) proportional to i^-s (s = 0: uniform).
class AdapterPopularity {
public:
    AdapterPopularity(int64_t n, double s);
    // The adapter (1..n) of request `request`: a deterministic draw from (seed, request).
    int32_t draw(uint64_t seed, int64_t request) const;
    double probability(int32_t adapter) const;

private:
    std::vector<double> cdf_;
};

// A replica's GPU slots: which adapters are resident, how many running sequences use each, and the
// loads the admissions caused.
class LoraPool {
public:
    LoraPool(int64_t slots, double adapter_bytes) : slots_(slots), adapter_bytes_(adapter_bytes) {}
    // Whether a sequence of `adapter` may run beside the running ones (adapter 0: the base model).
    bool admissible(int32_t adapter) const;
    // A sequence of `adapter` starts running: loads the adapter into a slot when it is not resident
    // (the caller checked admissible()).
    void acquire(int32_t adapter);
    // A sequence of `adapter` stops running (finished, preempted): the adapter stays resident.
    void release(int32_t adapter);
    // Bytes loaded since the last call (one device), and resets them.
    double take_load_bytes();
    int64_t loads() const { return loads_; }
    int64_t active_adapters() const { return active_; }

private:
    struct Slot {
        int64_t users = 0;
        uint64_t used = 0;  // LRU stamp of the last release
    };
    int64_t slots_;
    double adapter_bytes_;
    std::unordered_map<int32_t, Slot> resident_;
    int64_t active_ = 0;  // resident adapters with users
    int64_t loads_ = 0;
    double pending_bytes_ = 0;
    uint64_t clock_ = 0;
};

}  // namespace fathom::workloads::serving
