#pragma once
// A map from short integer sequences (iteration shape keys) to values, for the serving loop's
// per-iteration cost lookup: open addressing with linear probing over a flat slot array, the keys
// back to back in one pool, the values in a deque (references stay valid as it grows). The
// profile of BM_Serving had an unordered_map of vector keys at 13% of the run (node chasing,
// hashing and comparing through pointers); this does one probe into a contiguous array.
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

namespace fathom::workloads::serving {

template <typename V>
class ShapeCache {
public:
    static uint64_t hash(const std::vector<int64_t>& k) {
        uint64_t h = 0x9e3779b97f4a7c15ull ^ k.size();
        for (int64_t x : k) {
            h ^= static_cast<uint64_t>(x);
            h *= 0xbf58476d1ce4e5b9ull;
            h ^= h >> 31;
        }
        return h;
    }
    // The value of `k` (hash `h`), or null.
    const V* find(const std::vector<int64_t>& k, uint64_t h) const {
        if (slots_.empty()) return nullptr;
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.value == kEmpty) return nullptr;
            if (s.hash == h && s.len == k.size() &&
                std::memcmp(&keys_[s.offset], k.data(), k.size() * sizeof(int64_t)) == 0)
                return &values_[s.value];
        }
    }
    // Adds `k` (absent) with `v`.
    const V& insert(const std::vector<int64_t>& k, uint64_t h, V v) {
        if ((values_.size() + 1) * 4 > slots_.size() * 3) grow();
        values_.push_back(std::move(v));
        place(Slot{h, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(k.size()),
                   static_cast<uint32_t>(values_.size() - 1)});
        keys_.insert(keys_.end(), k.begin(), k.end());
        return values_.back();
    }
    size_t size() const { return values_.size(); }

private:
    static constexpr uint32_t kEmpty = UINT32_MAX;
    struct Slot {
        uint64_t hash = 0;
        uint32_t offset = 0;
        uint32_t len = 0;
        uint32_t value = kEmpty;
    };
    void place(const Slot& s) {
        size_t i = s.hash & mask_;
        while (slots_[i].value != kEmpty) i = (i + 1) & mask_;
        slots_[i] = s;
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
        mask_ = slots_.size() - 1;
        for (const Slot& s : old)
            if (s.value != kEmpty) place(s);
    }
    std::vector<Slot> slots_;  // a power of two, at most 3/4 full
    size_t mask_ = 0;
    std::vector<int64_t> keys_;
    std::deque<V> values_;
};

}  // namespace fathom::workloads::serving
