#pragma once
// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes
// of its micro-batches and model chunks. One schedule per file, registered by name.
//
// With `chunks` model chunks per stage (virtual pipeline, interleaving), chunk c of stage s is
// virtual stage v = c * stages + s. Micro-batch m's forward visits virtual stages 0..V-1 in order
// and its backward V-1..0; the schedules only order each stage's own work, and the replay adds
// the cross-stage dependencies.
#include <memory>
#include <string>
#include <vector>

#include "sim/registry.h"

namespace fathom::workloads {

struct PipelineSlot {
    int microbatch;
    int chunk;
    bool forward;
};

class PipelineSchedule {
public:
    virtual ~PipelineSchedule() = default;
    // Work order of `stage` (0-based) of `stages`, with `chunks` chunks and `microbatches`.
    virtual std::vector<PipelineSlot> order(int stage, int stages, int chunks, int microbatches) const = 0;
    // Empty if the shape is allowed, else the reason (e.g. interleaving needs chunks > 1).
    virtual std::string check(int stages, int chunks, int microbatches) const = 0;
};

using ScheduleFactory = std::unique_ptr<PipelineSchedule> (*)();
using ScheduleRegistry = sim::Registry<ScheduleFactory>;
const ScheduleRegistry& schedule_registry();

std::unique_ptr<PipelineSchedule> make_gpipe();
std::unique_ptr<PipelineSchedule> make_one_f_one_b();
std::unique_ptr<PipelineSchedule> make_interleaved_1f1b();

// Peak number of (micro-batch, chunk) activations alive at once in an order: +1 per forward,
// -1 per backward.
int peak_in_flight(const std::vector<PipelineSlot>& order);

}  // namespace fathom::workloads
