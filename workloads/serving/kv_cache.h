#pragma once
// The KV cache of one replica: a pool of paged blocks (vLLM's PagedAttention) and, optionally, a
// prefix cache of full blocks organized as a radix tree keyed by content, with LRU eviction.
//
// Content. The simulator never sees token ids, so a block's content is named by what produced it
// (workloads/serving/request.h): tokens of a shared-prefix group, or of a session's history (a
// turn's prompt and output become the next turn's history), or tokens unique to one request. A
// block is shareable when none of its tokens is unique; its identity chains its parent's identity
// with its own content (vLLM's block hash of parent hash + token ids), so equal identities mean
// equal prefixes: the radix tree is the map from identity to cached block.
//
// Eviction. A cached block nobody references is evictable and still counts as used memory until a
// new allocation evicts it: least recently used first, and among equally recent ones the deepest
// (a leaf before its parent, so a cached prefix never loses its head while keeping its tail).
#include "workloads/serving/request.h"

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace fathom::workloads::serving {

// Identities of a request's shareable full blocks of its first `tokens` tokens (at most).
std::vector<uint64_t> shareable_blocks(const Request& r, int64_t tokens, int64_t block_size);

class KvCache {
public:
    KvCache(int64_t blocks, int64_t block_size, bool prefix_caching);

    int64_t block_size() const { return block_size_; }
    int64_t capacity() const { return capacity_; }
    int64_t used() const { return used_; }              // private + cached blocks
    int64_t free() const { return capacity_ - used_; }  // never allocated
    int64_t available() const { return free() + static_cast<int64_t>(evictable_.size()); }
    int64_t referenced() const { return used_ - static_cast<int64_t>(evictable_.size()); }  // in use by sequences
    static int64_t blocks_for(int64_t tokens, int64_t block_size) { return (tokens + block_size - 1) / block_size; }

    // Private blocks: allocate `n` (evicting cached blocks if needed) or give them back.
    bool allocate(int64_t n);
    void release(int64_t n);

    // Prefix caching. lookup(): the longest cached chain of `ids`, referenced by the caller (each
    // block's reference count grows); returns how many blocks matched. unreference(): the caller no
    // longer uses those blocks. insert(): the caller's private blocks with these identities (the
    // first `count` of `ids` after the `skip` it already references) become cached, referenced by
    // it; returns how many were inserted (an identity already cached stays private and is released
    // by the caller).
    int64_t lookup(const std::vector<uint64_t>& ids, uint64_t now);
    void unreference(const std::vector<uint64_t>& ids, int64_t count, uint64_t now);
    int64_t insert(const std::vector<uint64_t>& ids, int64_t skip, int64_t count);

    // Statistics.
    int64_t evictions() const { return evictions_; }

private:
    struct Block {
        int refs = 0;
        uint64_t last_use = 0;
        int64_t depth = 0;
    };
    using EvictKey = std::tuple<uint64_t, int64_t, uint64_t>;  // last_use, -depth, id
    void make_evictable(uint64_t id, Block& b);
    bool evict_one();

    int64_t capacity_;
    int64_t block_size_;
    bool prefix_caching_;
    int64_t used_ = 0;
    int64_t evictions_ = 0;
    std::unordered_map<uint64_t, Block> blocks_;
    std::set<EvictKey> evictable_;
};

}  // namespace fathom::workloads::serving
