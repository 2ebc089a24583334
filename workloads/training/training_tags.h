#pragma once
// Task tags of the training replay (sim::TaskRecord::tag): what a task is, for the trace.
#include <cstdint>

namespace fathom::workloads {

enum TrainingTag : uint16_t {
    kForward,
    kBackward,
    kOptimizer,
    kTpComm,
    kCpComm,
    kPpComm,
    kDpGradSync,
    kDpParamGather,
    kBackwardInput,
    kBackwardWeight,
    kEpComm,
    kTrainingTags
};

inline const char* training_tag_name(uint16_t t) {
    static const char* names[] = {"F", "B", "optimizer", "tp", "cp", "pp", "dp-grad", "dp-param", "Bi", "W", "ep"};
    return t < kTrainingTags ? names[t] : "?";
}

}  // namespace fathom::workloads
