#pragma once
// Lays one training step's passes onto the stages' streams (sim/task_graph.h): every stage's
// schedule order (workloads/training/schedules/), each pass as a chain of its layers' tasks
// (workloads/replay/pass_chain.h), activations and gradients sent between stages, and the
// data-parallel traffic of each layer (GradientSync).
//
// Symmetry: every data-parallel replica and every tensor-parallel rank does the same work, so the
// replay builds one representative rank per pipeline stage and charges each collective for its full
// group (the costs come from StepCosts). Per layer and pass: the compute task, then the layer's
// collectives as the priced program places them (workloads/replay/program_cost.h: Placement, from
// each step's own flags), in the order a device issues them: awaited by the compute or beside it
// from the previous layer's compute end, blocking or overlapped after it; ZeRO-3 gathers prefetched
// one layer ahead. Each stage has a communication stream per group kind the step moves data over.
#include "sim/task_graph.h"
#include "workloads/replay/pass_chain.h"
#include "workloads/training/gradient_sync.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/stage_map.h"
#include "workloads/training/step_costs.h"

#include <vector>

namespace fathom::workloads {

class PipelineReplay {
public:
    // `list_transfers`: list every communication task with what it moves (carried()), for a network
    // timer that times tasks (hardware/network/transfer_timer.h: TransferTimer::times_tasks).
    PipelineReplay(sim::TaskGraph& graph, const TrainingPlan& plan, const PipelineSchedule& schedule,
                   const StageMap& map, const StepCosts& costs, ProgramCoster& coster, bool list_transfers = true);

    // Compute beside collectives slows (workloads/replay/compute_beside_comm.h): `b` learns each
    // compute task's stretch as build() lays it, and each stage's streams after it. Set before
    // build(); null (the default): compute keeps its priced time.
    void set_beside_comm(ComputeBesideComm* b) { beside_comm_ = b; }
    // Adds every task of the step to the graph.
    void build();
    const std::vector<StageStreams>& streams() const { return streams_; }
    // The group kinds every stage has a communication stream of (those the step moves data over).
    const std::vector<models::GroupKind>& comm_kinds() const { return comm_kinds_; }
    // Every communication task of a stage and what it moves, in the order they were added (none
    // unless listed).
    const std::vector<CommTask>& carried(int stage) const;
    const std::vector<PipelineSlot>& order(int stage) const { return orders_[static_cast<size_t>(stage)]; }
    // Every pipeline send of the step: its task and the stages it goes from and to (a flow replay
    // routes each by its direction; interleaved schedules also send from the last stage to the first).
    struct Send {
        sim::TaskId task;
        int from;
        int to;
    };
    const std::vector<Send>& sends() const { return sends_; }

private:
    // `paired_input`: for the forward of a forward-backward pair, its backward's input.
    void emit(int stage, const PipelineSlot& slot, bool last_gradient_pass_of_chunk,
              std::optional<sim::TaskId> paired_input = std::nullopt);
    std::optional<sim::TaskId> backward_input(int stage, const PipelineSlot& backward) const;
    void emit_layers(int stage, int v, const PipelineSlot& slot, PassChain& chain);
    size_t key(int mb, int v) const { return static_cast<size_t>(mb * map_.virtual_stages() + v); }

    sim::TaskGraph& graph_;
    const TrainingPlan& plan_;
    const PipelineSchedule& schedule_;
    const StageMap& map_;
    const StepCosts& costs_;
    std::vector<uint32_t> names_;    // interned name of each TrainingTag
    std::vector<TaskStyle> styles_;  // per pass kind
    std::vector<models::GroupKind> comm_kinds_;
    std::vector<StageStreams> streams_;  // per stage
    std::vector<std::vector<PipelineSlot>> orders_;
    std::vector<std::vector<CommTask>> carried_;  // per stage; empty when not listed
    GradientSync sync_;
    ComputeBesideComm* beside_comm_ = nullptr;

    // Ends of each (micro-batch, virtual stage) pass: forward (its send, or its last task on the
    // last virtual stage), backward input (its send), and the last forward task before any send.
    std::vector<sim::TaskId> forward_done_, backward_done_, forward_last_;
    std::vector<sim::TaskId> last_gradient_pass_;  // per stage
    std::vector<Send> sends_;
};

}  // namespace fathom::workloads
