#pragma once
// Laying costed programs onto one device's streams (sim/task_graph.h), shared by every workload.
//
// A device (a pipeline stage of a training replica, a stage of a serving replica) has a compute
// stream and one communication stream per group kind it uses. A PassChain lays one pass on them as
// a chain: each task waits for the previous link, the first for the pass's input (from another
// device). Collectives either sit on the chain (blocking: the next compute op waits) or run beside
// it (overlapped: only the end of the pass waits for them).
#include "models/program/layer_program.h"
#include "sim/task_graph.h"
#include "workloads/replay/compute_beside_comm.h"
#include "workloads/replay/program_cost.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace fathom::workloads {

struct StageStreams {
    sim::StreamId compute = 0;
    std::array<std::optional<sim::StreamId>, models::kGroupKinds> comm;
    sim::StreamId of(models::GroupKind g) const;  // the stream of a kind the device has
};

// Adds a compute stream and one "<kind>-comm" stream per kind, in that order, as timeline group
// `group` (e.g. "stage 3"). A workload gives the kinds its device has traffic of.
StageStreams add_stage_streams(sim::TaskGraph& graph, const std::string& group,
                               const std::vector<models::GroupKind>& kinds);

// A communication task of a device and what it moves, for the network's timer
// (hardware/network/transfer_timer.h): the stream kind it runs on, the moves of `parts` (CommPart
// bits) among `moves` (which outlive the replay's hand-over to the timer) and, for a pipeline send,
// the device it goes to.
struct CommTask {
    sim::TaskId task = 0;
    models::GroupKind kind = models::GroupKind::tp;
    uint8_t parts = kAllParts;
    int peer = -1;
    const CommMoves* moves = nullptr;
};

// How a workload labels its tasks: a tag (and its interned name) for compute tasks and one per
// communication kind.
struct TaskStyle {
    uint16_t compute_tag = 0;
    std::array<uint16_t, models::kGroupKinds> comm_tag{};
    const std::vector<uint32_t>* names = nullptr;  // interned name of each tag
};

class PassChain {
public:
    // Communication tasks are listed in `carried` (the device's, for a network timer that times
    // tasks; null: not listed, the closed form needs no list).
    PassChain(sim::TaskGraph& graph, const StageStreams& streams, const TaskStyle& style,
              std::optional<sim::TaskId> input, std::vector<CommTask>* carried)
        : graph_(graph), streams_(streams), style_(style), input_(input), carried_(carried) {}

    // A task on `stream` with `tag`, not yet linked to anything.
    sim::TaskId add(sim::StreamId stream, double seconds, uint16_t tag, int label_a, int label_b);
    // A compute task; `beside_comm_stretch`: how many times as long it runs while a collective
    // runs beside it (workloads/replay/compute_beside_comm.h), where the chain has an observer.
    sim::TaskId add_compute(double seconds, int label_a, int label_b, double beside_comm_stretch = 1.0);
    // The observer that slows compute beside collectives (null: none).
    void set_beside_comm(ComputeBesideComm* b) { beside_comm_ = b; }
    // A communication task on the stream of `g` moving the moves of `parts` among `moves`, listed as
    // carried (when listed).
    sim::TaskId add_comm(models::GroupKind g, double seconds, const CommMoves& moves, uint8_t parts, int label_a,
                         int label_b, int peer = -1);
    // `t` waits for the previous link (or the input) and becomes the last link.
    void chain(sim::TaskId t);
    // `t` waits for `compute` and, where another task followed it, for the last link, and becomes
    // the last link (a blocking collective after a layer's compute).
    void follow(sim::TaskId compute, sim::TaskId t);
    // A whole segment on the chain: its lead collectives, its compute (always a task, possibly
    // empty), its trail collectives; zero-length collectives are left out.
    void segment(const PassCost& c, int label_a, int label_b);
    // A collective running beside the chain on the stream of `g`; the pass ends only after it.
    void overlap(models::GroupKind g) { overlapped_[static_cast<size_t>(g)] = true; }
    // The end of the pass: the last link, or, after overlapped collectives, zero-length tasks on
    // their (in-order) streams, so after the last of them, joined with the last link.
    sim::TaskId finish(int label_a);

    std::optional<sim::TaskId> input() const { return input_; }

private:
    sim::TaskGraph& graph_;
    const StageStreams& streams_;
    const TaskStyle& style_;
    std::optional<sim::TaskId> input_;
    std::vector<CommTask>* carried_;
    std::optional<sim::TaskId> last_;
    std::array<bool, models::kGroupKinds> overlapped_{};
    ComputeBesideComm* beside_comm_ = nullptr;
};

}  // namespace fathom::workloads
