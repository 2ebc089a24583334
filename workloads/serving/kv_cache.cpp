#include "workloads/serving/kv_cache.h"

#include "sim/error.h"

#include <tuple>

namespace fathom::workloads::serving {
namespace {

uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

}  // namespace

std::vector<uint64_t> shareable_blocks(const Request& r, int64_t tokens, int64_t block_size) {
    // Tokens [0, prefix) belong to the group; with a session, every later token is the session's
    // (this turn's prompt and output are the next turn's history); without one, tokens after the
    // prefix are unique and end the shareable run.
    const int64_t prefix = r.prefix_group ? r.prefix_tokens : 0;
    const int64_t shared_end = r.session ? tokens : prefix;
    std::vector<uint64_t> out;
    uint64_t h = 0x6A09E667F3BCC909ull;
    // A LoRA adapter changes every layer's keys and values: blocks of the same tokens under another
    // adapter are other blocks (vLLM hashes the adapter's id into every block's key).
    if (r.adapter > 0) h = mix(h, static_cast<uint64_t>(r.adapter));
    for (int64_t j = 0; (j + 1) * block_size <= std::min(tokens, shared_end); ++j) {
        const int64_t begin = j * block_size, end = begin + block_size;
        const uint64_t group = begin < prefix ? r.prefix_group : 0;
        const uint64_t session = end > prefix ? r.session : 0;
        h = mix(mix(mix(h, group), session), static_cast<uint64_t>(j));
        out.push_back(h | 1);  // never 0
    }
    return out;
}

KvCache::KvCache(int64_t blocks, int64_t block_size, bool prefix_caching)
    : capacity_(blocks), block_size_(block_size), prefix_caching_(prefix_caching) {
    FATHOM_CHECK(blocks >= 0 && block_size > 0, "KV cache size");
}

bool KvCache::evict_one() {
    if (evictable_.empty()) return false;
    const auto it = evictable_.begin();
    blocks_.erase(std::get<2>(*it));
    evictable_.erase(it);
    --used_;
    ++evictions_;
    return true;
}

bool KvCache::allocate(int64_t n) {
    if (n > available()) return false;
    while (free() < n) evict_one();
    used_ += n;
    return true;
}

void KvCache::release(int64_t n) {
    FATHOM_CHECK(n >= 0 && n <= referenced(), "KV cache: releasing blocks not held");
    used_ -= n;
}

void KvCache::make_evictable(uint64_t id, Block& b) { evictable_.emplace(b.last_use, -b.depth, id); }

int64_t KvCache::lookup(const std::vector<uint64_t>& ids, uint64_t now) {
    if (!prefix_caching_) return 0;
    int64_t n = 0;
    for (uint64_t id : ids) {
        auto it = blocks_.find(id);
        if (it == blocks_.end()) break;
        Block& b = it->second;
        if (b.refs == 0) evictable_.erase({b.last_use, -b.depth, id});
        ++b.refs;
        b.last_use = now;
        ++n;
    }
    return n;
}

void KvCache::unreference(const std::vector<uint64_t>& ids, int64_t count, uint64_t now) {
    for (int64_t j = 0; j < count; ++j) {
        auto it = blocks_.find(ids[static_cast<size_t>(j)]);
        FATHOM_CHECK(it != blocks_.end() && it->second.refs > 0, "KV cache: unreferencing a block not referenced");
        Block& b = it->second;
        b.last_use = std::max(b.last_use, now);
        if (--b.refs == 0) make_evictable(it->first, b);
    }
}

int64_t KvCache::insert(const std::vector<uint64_t>& ids, int64_t skip, int64_t count) {
    if (!prefix_caching_) return 0;
    int64_t inserted = 0;
    for (int64_t j = skip; j < skip + count; ++j) {
        const uint64_t id = ids[static_cast<size_t>(j)];
        if (blocks_.count(id)) break;  // cached meanwhile by another request: keep ours private
        Block b;
        b.refs = 1;
        b.depth = j;
        blocks_.emplace(id, b);
        ++inserted;
    }
    return inserted;
}

}  // namespace fathom::workloads::serving
