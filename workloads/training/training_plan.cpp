#include "workloads/training/training_plan.h"

#include "sim/stable_hash.h"

namespace fathom::workloads {

const char* recompute_name(Recompute r) {
    switch (r) {
        case Recompute::None: return "none";
        case Recompute::Selective: return "selective";
        case Recompute::Full: return "full";
    }
    return "?";
}

uint64_t TrainingPlan::hash() const {
    sim::StableHash h;
    std::apply([&h](const auto&... x) { (h.add(x), ...); }, layout.tie());
    std::apply([&h](const auto&... x) { (h.add(x), ...); }, training.tie());
    std::apply([&h](const auto&... x) { (h.add(x), ...); }, stack.tie());
    return h.value();
}

}  // namespace fathom::workloads
