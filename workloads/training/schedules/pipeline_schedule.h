#pragma once
// Pipeline schedules: the order in which one pipeline stage runs its passes over its micro-batches
// and model chunks. One schedule per file, registered by name.
//
// A schedule owns two things:
//  - its pass kinds: a forward, and either one backward (input and weight gradients together) or
//    a backward-input and a later backward-weight pass (zero-bubble schedules place the weight
//    gradients in the bubbles);
//  - its virtual-stage mapping: which model chunk (virtual stage, 0 = the first layers) chunk c of
//    stage s holds. Interleaved schedules use c x stages + s; V-shaped ones fold the model back
//    (chunk 1 of stage s holds virtual stage 2 x stages - 1 - s).
// Micro-batch m's forward visits virtual stages 0..V-1 in order and its backward V-1..0; a
// schedule only orders each stage's own work, and the replay adds the cross-stage dependencies.
// A bidirectional schedule (DualPipe) has several routes: the virtual stages split into `routes()`
// consecutive runs of V / routes, each a whole copy of the model (route r holds virtual stages
// r V / routes .. (r + 1) V / routes - 1); micro-batch m travels route m / (M / routes) only.
#include "sim/registry.h"

#include <memory>
#include <string>
#include <vector>

namespace fathom::workloads {

enum class PassKind : uint8_t {
    Forward,
    Backward,        // input and weight gradients in one pass
    BackwardInput,   // input gradients only (what the previous stage waits for)
    BackwardWeight,  // weight gradients of a pass whose BackwardInput ran before
};

struct PipelineSlot {
    int microbatch;
    int chunk;
    PassKind pass;
    // The forward of a forward-backward pair (DualPipe's overlapped chunks): the next slot is its
    // backward, and the pair starts only once both inputs have arrived (the reference receives
    // both before computing either).
    bool paired = false;
};

class PipelineSchedule {
public:
    virtual ~PipelineSchedule() = default;
    // Work order of `stage` (0-based) of `stages`, with `chunks` chunks and `microbatches`.
    virtual std::vector<PipelineSlot> order(int stage, int stages, int chunks, int microbatches) const = 0;
    // Empty if the shape is allowed, else the reason (e.g. interleaving needs chunks > 1).
    virtual std::string check(int stages, int chunks, int microbatches) const = 0;
    // The scenario key a failed check is about ("parallel.pp", "parallel.vp",
    // "training.global_batch_size"); empty: parallel.vp with several chunks, else training.schedule.
    virtual std::string check_key(int /*stages*/, int /*chunks*/, int /*microbatches*/) const { return ""; }
    // The virtual stage chunk `chunk` of `stage` holds. Default: interleaved, chunk x stages + stage.
    virtual int virtual_stage(int stage, int chunk, int stages, int chunks) const;
    // Copies of the model the virtual stages form (1; 2 for DualPipe's two directions).
    virtual int routes() const { return 1; }
};

using ScheduleFactory = std::unique_ptr<PipelineSchedule> (*)();
using ScheduleRegistry = sim::Registry<ScheduleFactory>;
const ScheduleRegistry& schedule_registry();

struct ParallelLayout;
// The schedule a layout runs when none is named (a scenario without training.schedule, a search's
// "auto"): interleaved-1f1b with several model chunks per stage, else 1f1b. kDefaultScheduleRule
// says the same in words (the key reference).
const char* default_schedule(const ParallelLayout& layout);
inline constexpr const char* kDefaultScheduleRule = "interleaved-1f1b when vp > 1, else 1f1b";

std::unique_ptr<PipelineSchedule> make_gpipe();
std::unique_ptr<PipelineSchedule> make_one_f_one_b();
std::unique_ptr<PipelineSchedule> make_interleaved_1f1b();
std::unique_ptr<PipelineSchedule> make_zb_h1();
std::unique_ptr<PipelineSchedule> make_dualpipe();
std::unique_ptr<PipelineSchedule> make_breadth_first();
std::unique_ptr<PipelineSchedule> make_zb_v();
std::unique_ptr<PipelineSchedule> make_v_half();
std::unique_ptr<PipelineSchedule> make_v_min();

// The V placement of two chunks per stage: chunk 0 of stage s holds virtual stage s, chunk 1
// virtual stage 2 stages - 1 - s (stage 0 holds the first and the last layers).
inline int v_shape_stage(int stage, int chunk, int stages) { return chunk == 0 ? stage : 2 * stages - 1 - stage; }

// Peak number of (micro-batch, chunk) activations alive at once in an order: +1 per forward, -1
// per pass that consumes them (Backward or BackwardInput; a later BackwardWeight keeps only the
// inputs of its GEMMs, which this count ignores).
int peak_in_flight(const std::vector<PipelineSlot>& order);

}  // namespace fathom::workloads
