#pragma once
// A KV-cache tier below the GPU's prefix cache (papers.md F04, F09; vLLM's CPU offloading
// connector, LMCache's local CPU backend, SGLang's HiCache): every full shareable block is stored
// here as it is computed (vLLM's connector "offloads every newly-computed full KV block to host as
// it's produced"; SGLang's write_through), by identity, up to `capacity` blocks, the least recently
// used dropped first. A request whose prompt continues past its GPU hits with blocks held here
// loads them back over the host link instead of recomputing them. The tier holds a superset of the
// GPU's cached blocks while it is larger than the GPU cache.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace fathom::workloads::serving {

// Seconds the copies of one block loaded back from host memory add beyond its bytes, on one GPU
// holding `layers` of the model's layers: with `copy` "memcpy" one cudaMemcpyAsync per layer and
// per K and V tensor (one latent tensor under MLA), each adding the link's copy_latency (vLLM's
// OffloadingConnector calls ops.swap_blocks per layer, one copy per block); "kernel" none (one
// kernel reads every block from pinned host memory: LMCache, SGLang HiCache).
// What loads from the KV tiers copy into one device: the host tier's blocks and bytes, the NVMe
// tier's bytes and the shared store's bytes.
struct TierLoad {
    int64_t host_blocks = 0;
    double host_bytes = 0, ssd_bytes = 0, store_bytes = 0;
    double saved_bytes = 0;  // blocks copied to host memory before the next iteration (offload_store blocking)
    TierLoad& operator+=(const TierLoad& o) {
        host_blocks += o.host_blocks;
        host_bytes += o.host_bytes;
        ssd_bytes += o.ssd_bytes;
        store_bytes += o.store_bytes;
        saved_bytes += o.saved_bytes;
        return *this;
    }
};

// The values of KvSettings::offload_copy ("memcpy", "kernel"), offload_load ("blocking",
// "layerwise", "async") and offload_store ("async", "blocking").
const std::vector<std::string>& kv_copy_methods();
const std::vector<std::string>& kv_load_modes();
const std::vector<std::string>& kv_store_modes();

double kv_block_copy_seconds(const std::string& copy, const hardware::PcieSpec& link, const models::ModelSpec& m,
                             int64_t layers);

class KvTier {
public:
    explicit KvTier(int64_t capacity) : capacity_(capacity) {}

    int64_t capacity() const { return capacity_; }
    int64_t size() const { return static_cast<int64_t>(blocks_.size()); }
    bool contains(uint64_t id) const { return blocks_.count(id) > 0; }
    // Stores a block (most recent), dropping the least recent when full, into the tier below
    // when there is one.
    void store(uint64_t id);
    // The tier the blocks this one drops go to (an NVMe tier below host memory); null: none.
    void set_below(KvTier* below) { below_ = below; }
    // A block loaded back into the GPU: most recent again; false when the tier does not hold it.
    bool touch(uint64_t id);
    int64_t stored() const { return stored_; }
    int64_t dropped() const { return dropped_; }

private:
    int64_t capacity_;
    std::list<uint64_t> order_;  // least recent first
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> blocks_;
    int64_t stored_ = 0, dropped_ = 0;
    KvTier* below_ = nullptr;
};

}  // namespace fathom::workloads::serving
