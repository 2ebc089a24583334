#include "workloads/serving/lora.h"

#include "models/llm/dense_layer.h"
#include "models/llm/lora.h"
#include "models/llm/model_spec.h"
#include "sim/error.h"
#include "sim/random.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace fathom::workloads::serving {

double lora_adapter_bytes(const models::ModelSpec& model, int tp, int pp, const LoraSettings& lora, int64_t rank) {
    models::LayerInputs in;
    in.shard.tp = tp;
    in.shard.etp = tp;
    in.batch = models::TokenBatch::uniform(1, 1, 1);
    const double per_layer =
        models::lora_serving_params(models::dense_layer_forward(model, in), rank,
                                    lora.modules == LoraModules::Attention, models::is_gated(model.activation));
    const int64_t layers = (model.layers + pp - 1) / pp;
    return per_layer * static_cast<double>(layers) * 2.0;  // bf16
}

AdapterPopularity::AdapterPopularity(int64_t n, double s) {
    cdf_.reserve(static_cast<size_t>(n));
    double sum = 0;
    for (int64_t i = 1; i <= n; ++i) {
        sum += std::pow(static_cast<double>(i), -s);
        cdf_.push_back(sum);
    }
    for (double& c : cdf_) c /= sum;
}

int32_t AdapterPopularity::draw(uint64_t seed, int64_t request) const {
    using sim::mix64;
    const uint64_t h = mix64(mix64(seed ^ 0x4c6f5241ull) ^ mix64(static_cast<uint64_t>(request)));
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
    const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
    return static_cast<int32_t>(std::min<ptrdiff_t>(it - cdf_.begin(), static_cast<ptrdiff_t>(cdf_.size()) - 1) + 1);
}

double AdapterPopularity::probability(int32_t adapter) const {
    const auto i = static_cast<size_t>(adapter - 1);
    return cdf_[i] - (i > 0 ? cdf_[i - 1] : 0.0);
}

bool LoraPool::admissible(int32_t adapter) const {
    if (adapter == 0) return true;
    const auto it = resident_.find(adapter);
    if (it != resident_.end() && it->second.users > 0) return true;
    return active_ < slots_;
}

void LoraPool::acquire(int32_t adapter) {
    if (adapter == 0) return;
    auto it = resident_.find(adapter);
    if (it == resident_.end()) {
        if (static_cast<int64_t>(resident_.size()) >= slots_) {
            // The least recently released slot no running sequence uses (stamps are unique).
            auto victim = resident_.end();
            for (auto r = resident_.begin(); r != resident_.end(); ++r)
                if (r->second.users == 0 && (victim == resident_.end() || r->second.used < victim->second.used))
                    victim = r;
            FATHOM_CHECK(victim != resident_.end(), "a LoRA adapter admitted with every slot in use");
            resident_.erase(victim);
        }
        it = resident_.emplace(adapter, Slot{}).first;
        ++loads_;
        pending_bytes_ += adapter_bytes_;
    }
    if (it->second.users++ == 0) ++active_;
}

void LoraPool::release(int32_t adapter) {
    if (adapter == 0) return;
    const auto it = resident_.find(adapter);
    FATHOM_CHECK(it != resident_.end() && it->second.users > 0, "releasing a LoRA adapter no sequence uses");
    if (--it->second.users == 0) {
        --active_;
        it->second.used = ++clock_;
    }
}

double LoraPool::take_load_bytes() { return std::exchange(pending_bytes_, 0.0); }

}  // namespace fathom::workloads::serving
