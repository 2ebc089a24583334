#include "workloads/serving/kv_tier.h"

namespace fathom::workloads::serving {

const std::vector<std::string>& kv_copy_methods() {
    static const std::vector<std::string> names{"memcpy", "kernel"};
    return names;
}

const std::vector<std::string>& kv_load_modes() {
    static const std::vector<std::string> names{"blocking", "layerwise", "async"};
    return names;
}

const std::vector<std::string>& kv_store_modes() {
    static const std::vector<std::string> modes{"async", "blocking"};
    return modes;
}

double kv_block_copy_seconds(const std::string& copy, const hardware::PcieSpec& link, const models::ModelSpec& m,
                             int64_t layers) {
    if (copy != "memcpy") return 0.0;
    const double tensors = m.mla.enabled() ? 1.0 : 2.0;
    return static_cast<double>(layers) * tensors * link.copy_latency;
}

void KvTier::store(uint64_t id) {
    if (capacity_ <= 0) return;
    if (auto it = blocks_.find(id); it != blocks_.end()) {
        order_.splice(order_.end(), order_, it->second);  // already held: most recent again
        return;
    }
    if (size() >= capacity_) {
        const uint64_t lru = order_.front();
        blocks_.erase(lru);
        order_.pop_front();
        ++dropped_;
        if (below_) below_->store(lru);
    }
    order_.push_back(id);
    blocks_.emplace(id, std::prev(order_.end()));
    ++stored_;
}

bool KvTier::touch(uint64_t id) {
    const auto it = blocks_.find(id);
    if (it == blocks_.end()) return false;
    order_.splice(order_.end(), order_, it->second);
    return true;
}

}  // namespace fathom::workloads::serving
