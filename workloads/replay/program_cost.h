#pragma once
// Prices layer programs (models/program/layer_program.h) for a replay at layer granularity: one
// task for all of a program's compute ops, and one task per stream for its collectives of each
// group kind, those before the first compute op (lead) apart from the rest (trail). A collective
// overlapped with the attention steps (CommStep::attention_steps) splits into the time its steps
// hide and the stall they do not: with attention time A over n steps and k transfers of T each,
// exposed = k max(0, T - A/n) (in lead or trail, where the step sits), hidden = k min(T, A/n).
//
// Where each part runs relative to the layer's compute (Placement) is decided here, from each
// step's own flags, so that a replay lays the priced layer out without knowing group kinds:
//   a step beside the attention steps (attention_steps > 0): its stall Awaited, its hidden part
//     Beside;
//   a TP boundary fused with its GEMM (gemm_fused) under TP overlap: its exposed part After, its
//     hidden part Fused;
//   any other collective After (blocking), except one the compute waits for (awaited: a
//     context-parallel exchange feeding the attention), Awaited, and one another micro-batch's
//     compute can hide (microbatch_overlap: the MoE all-to-all) under EP overlap, Overlapped.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/program/layer_program.h"
#include "workloads/parallelism.h"
#include "workloads/replay/op_sources.h"

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fathom::workloads {

// Which part of a priced layer a collective's move belongs to: before the layer's first compute op
// (lead), after it (trail), or beside the compute (hidden). A task carries the moves of the parts
// it lumps (a mask of CommPart bits).
enum class CommPart : uint8_t { Lead = 1, Trail = 2, Hidden = 4 };
inline constexpr uint8_t kExposedParts = 1 | 2, kAllParts = 1 | 2 | 4;
inline constexpr uint8_t bit(CommPart p) { return static_cast<uint8_t>(p); }

// One collective a communication task moves, on the rank's group of `group`: its transfer on the
// network (hardware/network/transfer_timer.h), `count` times in a row, each time the part `share`
// of it. A transfer the pricing splits between a part hidden beside compute and a part exposed
// (TP overlap: what its GEMM hides; a context-parallel transfer: what its attention step hides) is
// moved by both tasks, each with its share of the time it was priced at (the shares add to 1).
struct CommMove {
    hardware::Collective collective = hardware::Collective::AllReduce;
    double bytes = 0;
    models::GroupKind group = models::GroupKind::tp;
    CommPart part = CommPart::Lead;
    double share = 1;
    int count = 1;
};
// Moves in the order the program issues them.
using CommMoves = std::vector<CommMove>;

// Where a layer's collectives of one kind run relative to its compute, in the order a device
// issues them (each stream runs its tasks in order): at the layer's start (when the previous
// layer's compute ends) those its compute waits for, then those beside it; at its compute's end
// the rest.
enum class Placement : uint8_t {
    Awaited,     // at the start; the compute waits for it
    Beside,      // at the start, beside the compute; nothing but its stream waits for it
    Fused,       // at the start, beside the GEMM it is fused with; the end of the pass waits for it
    After,       // at the end; the next layer waits for it (blocking)
    Overlapped,  // at the end; only the end of the pass waits for it
};

// One communication task of a priced layer: a kind's exposed part (lead + trail) or hidden part.
struct PlacedComm {
    models::GroupKind kind = models::GroupKind::tp;
    Placement at = Placement::After;
    double seconds = 0;
    uint8_t parts = kExposedParts;  // the CommPart bits of the moves it carries
};
struct PlacedComms {
    std::array<PlacedComm, 2 * models::kGroupKinds> items{};
    size_t size = 0;
    const PlacedComm* begin() const { return items.data(); }
    const PlacedComm* end() const { return items.data() + size; }
};

struct PassCost {
    double compute = 0;  // seconds on the compute stream
    // Seconds the compute would take if all of it ran beside a collective (each op at its class's
    // AcceleratorCalibration::BesideComm slowdown; `compute` without one).
    double compute_beside_comm = 0;
    // How many times as long the compute runs beside a collective (1 for no compute).
    double beside_comm_stretch() const { return compute > 0 ? compute_beside_comm / compute : 1.0; }
    std::array<double, models::kGroupKinds> lead{};   // collectives before the first compute op
    std::array<double, models::kGroupKinds> trail{};  // collectives after it
    // Collectives running beside the compute (context-parallel K/V transfers beside the attention
    // steps): their stream is busy this long, the compute does not wait. The part of a transfer
    // its attention step cannot hide is in lead/trail.
    std::array<double, models::kGroupKinds> hidden{};
    // Per kind: every collective it moves, in program order, each with its part.
    std::array<CommMoves, models::kGroupKinds> moves{};
    // Per kind: where its exposed part (lead + trail) and its hidden part run.
    std::array<Placement, models::kGroupKinds> exposed_at = all(Placement::After);
    std::array<Placement, models::kGroupKinds> hidden_at = all(Placement::Beside);

    double lead_of(models::GroupKind g) const { return lead[static_cast<size_t>(g)]; }
    double trail_of(models::GroupKind g) const { return trail[static_cast<size_t>(g)]; }
    double hidden_of(models::GroupKind g) const { return hidden[static_cast<size_t>(g)]; }
    const CommMoves& moves_of(models::GroupKind g) const { return moves[static_cast<size_t>(g)]; }
    // The layer's communication tasks in the order a device issues them: by placement, then kind.
    PlacedComms placed() const;
    // Adds `o` stream by stream (a recomputed forward joining a backward pass; its moves after
    // this pass's).
    PassCost& operator+=(const PassCost& o);

private:
    static constexpr std::array<Placement, models::kGroupKinds> all(Placement p) {
        std::array<Placement, models::kGroupKinds> a{};
        for (auto& x : a) x = p;
        return a;
    }
};

class ProgramCoster {
public:
    ProgramCoster(const models::CostModel& cost, const hardware::NetworkModel& network, const ParallelLayout& layout)
        : cost_(cost), network_(network), layout_(layout) {}

    PassCost cost(const models::LayerProgram& program);
    double seconds(const models::OpDesc& op);
    // One collective of `bytes` on the rank's group of `kind` (0 for a group of one).
    double collective(hardware::Collective op, double bytes, models::GroupKind kind) const;
    // One comm step's transfer: its collective at the step's kernel efficiency (0 without one).
    double transfer(const models::CommStep& step) const;
    // Where the rank's group of `kind` sits (nodes, ranks per node).
    hardware::GroupLayout group_layout(models::GroupKind kind) const { return network_.layout(layout_.group(kind)); }
    // Multiplies the time of every fused-attention op (forward and backward): packed documents
    // (workloads/training/packing.h) price a micro-batch's attention as the busiest rank's.
    void set_attention_scale(double s) { attention_scale_ = s; }
    // Tensor-parallel communication overlap (userbuffers, async TP): each tensor-parallel
    // collective runs beside the GEMM it is fused with (an all-gather beside the GEMM that consumes
    // it, a reduce-scatter or all-reduce beside the GEMM that produces it). With transfer T and
    // GEMM G, max(0, T - G) stays exposed (in lead/trail), min(T, G) is hidden (on the tp stream
    // beside the compute), and `contention` x min(T, G) is added to the compute: the GEMM's loss of
    // SMs and bandwidth to the transfer (AcceleratorCalibration::tp_overlap_contention).
    void set_tp_overlap(double contention) { tp_overlap_ = contention; }
    // Each op class's slowdown beside a collective (PassCost::compute_beside_comm); unset: none.
    void set_beside_comm(const hardware::AcceleratorCalibration::BesideComm& b) { beside_comm_ = b; }
    // Expert-parallel communication overlap: the dispatch and combine all-to-alls run beside another
    // micro-batch's compute (Placement::Overlapped) instead of blocking.
    void set_ep_overlap(bool on) { ep_overlap_ = on; }
    // Lists each pass's collectives (PassCost::moves) for a network that times communication
    // tasks by their transfers (TransferTimer::times_tasks()); off, the moves stay empty: the
    // closed form and serving need only the seconds, and listing costs every priced layer.
    void set_moves(bool on) { moves_ = on; }
    // How the ops priced so far were priced, by class.
    const OpSources& sources() const { return sources_; }
    OpSources& sources() { return sources_; }

private:
    const models::CostModel& cost_;
    const hardware::NetworkModel& network_;
    const ParallelLayout& layout_;
    OpSources sources_;
    double attention_scale_ = 1;
    std::optional<double> tp_overlap_;
    hardware::AcceleratorCalibration::BesideComm beside_comm_;
    bool ep_overlap_ = false;
    bool moves_ = false;
};

}  // namespace fathom::workloads
