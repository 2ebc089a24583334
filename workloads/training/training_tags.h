#pragma once
// Task tags of the training replay (sim::TaskRecord::tag): what a task is, for the trace. Compute
// tags first, then the data-parallel traffic by what it moves (gradients reduced, parameters
// gathered), then one communication tag per group kind, named by the group kind.
#include "models/program/layer_program.h"

#include <cstdint>
#include <string>

namespace fathom::workloads {

enum TrainingTag : uint16_t {
    kForward,
    kBackward,
    kBackwardInput,
    kBackwardWeight,
    kOptimizer,
    kDpGradSync,
    kDpParamGather,
    kCommTags,  // comm_tag(kind) = kCommTags + kind
};
inline constexpr uint16_t kTrainingTags = kCommTags + models::kGroupKinds;

inline uint16_t comm_tag(models::GroupKind g) { return static_cast<uint16_t>(kCommTags + static_cast<uint16_t>(g)); }

inline std::string training_tag_name(uint16_t t) {
    static const char* names[] = {"F", "B", "Bi", "W", "optimizer", "dp-grad", "dp-param"};
    if (t < kCommTags) return names[t];
    if (t < kTrainingTags) return sim::name(static_cast<models::GroupKind>(t - kCommTags));
    return "?";
}

}  // namespace fathom::workloads
