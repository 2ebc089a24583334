#include "workloads/serving/replica_state.h"

#include "sim/error.h"

#include <algorithm>
#include <cmath>

namespace fathom::workloads::serving {

ReplicaState::ReplicaState(int id, const BatchingSettings& batching, const KvSettings& kv, int64_t kv_blocks,
                           double block_bytes)
    : id_(id),
      batching_(batching),
      kv_(kv),
      kv_cache_(kv_blocks, kv.block_size, kv.prefix_caching),
      block_bytes_(block_bytes),
      async_load_(kv.offload_load == "async") {
    if (kv.offload_bytes > 0 && block_bytes > 0) {
        tier_.emplace(static_cast<int64_t>(std::floor(kv.offload_bytes / block_bytes)));
        if (kv.offload_ssd_bytes > 0) {
            ssd_tier_.emplace(static_cast<int64_t>(std::floor(kv.offload_ssd_bytes / block_bytes)));
            tier_->set_below(&*ssd_tier_);
        }
    }
}

int64_t ReplicaState::blocks_needed(const Sequence& s, int64_t tokens) const {
    const int64_t held = s.kv_blocks + s.cached_blocks;
    // Most calls are a decode's next token inside its last block: no division for those.
    if (tokens <= held * kv_.block_size) return 0;
    return std::max<int64_t>(0, KvCache::blocks_for(tokens, kv_.block_size) - held);
}

namespace {

// Loads end at a whole unit of `unit` blocks: `loaded` (all tiers) after `hit` GPU blocks shrinks
// to the last unit boundary (none when that is within the GPU's hits), taking the store's blocks,
// then the NVMe tier's, then host memory's (the deepest tiers hold the tail).
void trim_to_units(int64_t hit, int64_t unit, int64_t& loaded, int64_t& from_ssd, int64_t& from_store) {
    const int64_t end = (hit + loaded) / unit * unit;
    int64_t cut = loaded - std::max<int64_t>(0, end - hit);
    loaded -= cut;
    for (int64_t* part : {&from_store, &from_ssd}) {
        const int64_t take = std::min(*part, cut);
        *part -= take;
        cut -= take;
    }
}

}  // namespace

int64_t ReplicaState::admit_front(int64_t max_chunk, int64_t reserve_tokens) {
    FATHOM_CHECK(!waiting.empty(), "admitting from an empty queue");
    Sequence& s = *waiting.front();
    const int64_t bs = kv_.block_size;
    // Prefix cache: the full cached blocks of the prompt (never the whole prompt: its last token
    // must be computed to sample from it, as vLLM recomputes the last block on a full hit).
    int64_t hit = 0, loaded = 0, from_ssd = 0, from_store = 0;
    KvTier* tier = tier_ ? &*tier_ : nullptr;
    const bool probed = kv_.prefix_caching && s.computed == 0;
    if (probed) {
        if (s.block_ids.empty()) s.block_ids = shareable_blocks(s.req, s.prefill_target, bs);
        const int64_t usable = std::min<int64_t>(static_cast<int64_t>(s.block_ids.size()), (s.prefill_target - 1) / bs);
        std::vector<uint64_t> probe(s.block_ids.begin(), s.block_ids.begin() + usable);
        hit = kv_cache_.lookup(probe, ++clock_);
        // KV offloading: the blocks after the GPU's hits that the tier below holds are loaded back
        // (and become its most recent).
        while (tier && hit + loaded < usable && tier->touch(probe[static_cast<size_t>(hit + loaded)])) ++loaded;
        // Then the NVMe tier's (blocks host memory dropped).
        while (ssd_tier_ && hit + loaded + from_ssd < usable &&
               ssd_tier_->touch(probe[static_cast<size_t>(hit + loaded + from_ssd)]))
            ++from_ssd;
        // Then the store the replicas share.
        while (store_ && hit + loaded + from_ssd + from_store < usable &&
               store_->touch(probe[static_cast<size_t>(hit + loaded + from_ssd + from_store)]))
            ++from_store;
        loaded += from_ssd + from_store;
        // Whole units from the prompt's start (LMCache's chunks): the deepest tier's blocks go first.
        if (loaded > 0 && kv_.offload_chunk > bs)
            trim_to_units(hit, kv_.offload_chunk / bs, loaded, from_ssd, from_store);
        s.cached_blocks = hit;
        s.computed = (hit + loaded) * bs;
    }
    // An asynchronous load admits the request for its cached and loaded tokens only.
    const bool park = loaded > 0 && async_load_;
    const int64_t chunk = park ? 0 : std::min(max_chunk, s.prefill_target - s.computed);
    if (kv_.reserve_output) reserve_tokens = std::max(reserve_tokens, s.req.prompt_tokens + s.req.output_tokens);
    const int64_t tokens = std::max(reserve_tokens, s.computed + chunk);
    const int64_t need = blocks_needed(s, tokens);
    const int64_t watermark =
        static_cast<int64_t>(std::ceil(kv_.watermark * static_cast<double>(kv_cache_.capacity())));
    if (kv_cache_.available() - need < watermark || !kv_cache_.allocate(need)) {
        if (hit > 0) kv_cache_.unreference(s.block_ids, hit, clock_);
        if (hit > 0 || loaded > 0) {
            s.cached_blocks = 0;
            s.computed = 0;
        }
        return 0;
    }
    s.kv_blocks += need;
    if (probed && s.preemptions == 0 && s.generated == 0) {
        s.hit_tokens = hit * bs;
        s.offload_hit_tokens = loaded * bs;
        s.ssd_hit_tokens = from_ssd * bs;
        s.store_hit_tokens = from_store * bs;
    }
    const int64_t from_host = loaded - from_ssd - from_store;
    const TierLoad load{from_host, static_cast<double>(from_host) * block_bytes_,
                        static_cast<double>(from_ssd) * block_bytes_, static_cast<double>(from_store) * block_bytes_};
    if (park) {
        parked_.push_back({&s, load});
        s.phase = Phase::Loading;
        waiting.pop_front();
        return kParked;
    }
    hold_adapter(s);
    tier_load_ += load;
    s.phase = Phase::Running;
    s.admit_order = ++admissions_;
    waiting.pop_front();
    running.push_back(&s);
    return chunk;
}

bool ReplicaState::next_admissible() {
    if (waiting.empty()) return false;
    if (!lora_) return true;
    if (lora_->admissible(waiting.front()->req.adapter)) return true;
    if (lora_admission_ == LoraAdmission::Fifo) return false;
    for (auto it = waiting.begin() + 1; it != waiting.end(); ++it) {
        if (!lora_->admissible((*it)->req.adapter)) continue;
        Sequence* s = *it;
        waiting.erase(it);
        waiting.push_front(s);
        return true;
    }
    return false;
}

void ReplicaState::hold_adapter(Sequence& s) {
    if (!lora_ || s.holds_adapter) return;
    lora_->acquire(s.req.adapter);
    s.holds_adapter = true;
}

void ReplicaState::drop_adapter(Sequence& s) {
    if (!s.holds_adapter) return;
    lora_->release(s.req.adapter);
    s.holds_adapter = false;
}

int64_t ReplicaState::running_count() const {
    int64_t n = 0;
    for (const Sequence* s : running) n += s->phase == Phase::Running ? 1 : 0;
    return n;
}

bool ReplicaState::grow(Sequence& s, int64_t tokens) {
    const int64_t need = blocks_needed(s, tokens);
    if (need == 0) return true;
    if (!kv_cache_.allocate(need)) return false;
    s.kv_blocks += need;
    return true;
}

void ReplicaState::publish(Sequence& s) {
    if (!kv_.prefix_caching) return;
    const int64_t bs = kv_.block_size;
    if (static_cast<int64_t>(s.block_ids.size()) * bs < s.computed)
        s.block_ids = shareable_blocks(s.req, s.computed, bs);
    const int64_t full = std::min<int64_t>(static_cast<int64_t>(s.block_ids.size()), s.computed / bs);
    const int64_t fresh = std::min(full - s.cached_blocks, s.kv_blocks);
    if (fresh > 0) {
        const int64_t ins = kv_cache_.insert(s.block_ids, s.cached_blocks, fresh);
        // KV offloading stores every block as it is computed (vLLM's offloading connector, SGLang's
        // write-through): the tier holds what the GPU caches and what it evicted since.
        // Without store_decode (LMCache's default) only blocks wholly within the prompt.
        const int64_t last = kv_.offload_store_decode ? s.cached_blocks + ins
                                                      : std::min(s.cached_blocks + ins, s.req.prompt_tokens / bs);
        if (tier_)
            for (int64_t j = s.cached_blocks; j < last; ++j) tier_->store(s.block_ids[static_cast<size_t>(j)]);
        if (store_)
            for (int64_t j = s.cached_blocks; j < last; ++j) store_->store(s.block_ids[static_cast<size_t>(j)]);
        s.kv_blocks -= ins;
        s.cached_blocks += ins;
    }
}

void ReplicaState::release(Sequence& s) {
    // Full shareable blocks the sequence computed stay in the prefix cache (as vLLM keeps freed
    // blocks with their hashes); the rest are freed.
    if (kv_.prefix_caching) {
        publish(s);
        kv_cache_.unreference(s.block_ids, s.cached_blocks, ++clock_);
    }
    kv_cache_.release(s.kv_blocks);
    s.kv_blocks = 0;
    s.cached_blocks = 0;
    drop_adapter(s);
}

void ReplicaState::preempt(Sequence& s, Batch& out) {
    FATHOM_CHECK(!s.in_flight && s.phase == Phase::Running, "preempting a sequence that is not running");
    ++s.preemptions;
    if (kv_.preemption == Preemption::Swap && !s.prefilling()) {
        out.swap_bytes += static_cast<double>(s.kv_blocks + s.cached_blocks) * block_bytes_;
        // The swapped copy holds all its KV privately on the host.
        if (kv_.prefix_caching) kv_cache_.unreference(s.block_ids, s.cached_blocks, ++clock_);
        kv_cache_.release(s.kv_blocks);
        s.kv_blocks = 0;
        s.cached_blocks = 0;
        s.phase = Phase::Swapped;
        drop_adapter(s);
        swapped.push_back(&s);
        return;
    }
    release(s);
    s.computed = 0;
    s.prefill_target = s.req.prompt_tokens + s.generated;
    s.phase = Phase::Waiting;
    waiting.push_front(&s);
}

void ReplicaState::resume_swapped(Batch& out) {
    while (!swapped.empty()) {
        Sequence& s = *swapped.front();
        const int64_t need = KvCache::blocks_for(s.computed + 1, kv_.block_size);
        if (lora_ && !lora_->admissible(s.req.adapter)) return;
        if (static_cast<int64_t>(running.size()) >= batching_.max_num_seqs || !kv_cache_.allocate(need)) return;
        s.kv_blocks = need;
        hold_adapter(s);
        out.swap_bytes += static_cast<double>(need) * block_bytes_;
        s.phase = Phase::Running;
        s.admit_order = ++admissions_;
        running.push_back(&s);
        swapped.pop_front();
    }
}

Sequence* ReplicaState::newest_running() {
    Sequence* best = nullptr;
    for (Sequence* s : running)
        if (s->phase == Phase::Running && !s->in_flight && (!best || s->admit_order > best->admit_order)) best = s;
    return best;
}

void ReplicaState::compact_running() {
    running.erase(
        std::remove_if(running.begin(), running.end(), [](const Sequence* s) { return s->phase != Phase::Running; }),
        running.end());
}

int64_t ReplicaState::in_flight_sequences() const {
    int64_t n = 0;
    for (const Sequence* s : running) n += s->in_flight ? 1 : 0;
    return n;
}

}  // namespace fathom::workloads::serving
