#pragma once
// Task tags of the training replay (sim::TaskRecord::tag): what a task is, for the trace.
#include "sim/enum_names.h"

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
// The label of each tag in the trace (not a vocabulary of the input: nothing parses these).
constexpr auto enum_names(TrainingTag) {
    return sim::name_table<TrainingTag>({{kForward, "F"},
                                         {kBackward, "B"},
                                         {kOptimizer, "optimizer"},
                                         {kTpComm, "tp"},
                                         {kCpComm, "cp"},
                                         {kPpComm, "pp"},
                                         {kDpGradSync, "dp-grad"},
                                         {kDpParamGather, "dp-param"},
                                         {kBackwardInput, "Bi"},
                                         {kBackwardWeight, "W"},
                                         {kEpComm, "ep"}});
}

// A task record's tag (an integer in sim::TaskRecord) as its trace label.
inline const char* training_tag_name(uint16_t t) { return sim::name(static_cast<TrainingTag>(t)); }

}  // namespace fathom::workloads
