#pragma once
// Predicts one optimizer step of a training plan: prices the layer programs (StepCosts), lays the
// step on the engine (PipelineReplay), runs it with metric collectors attached, and reports the
// step time, throughput, bubbles, exposed communication and the memory estimate
// (training_memory.h).
#include "hardware/network/network_model.h"
#include "hardware/network/transfer_timer.h"
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "models/program/layer_program.h"
#include "sim/simulator.h"
#include "sim/task_graph.h"
#include "workloads/replay/program_cost.h"
#include "workloads/training/training_memory.h"
#include "workloads/training/training_plan.h"

#include <array>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace fathom::workloads {

struct StageReport {
    int layers = 0;
    double compute_s = 0;  // compute stream busy (incl. recompute and optimizer)
    // Busy time of the communication stream of each group kind (0 for a kind without traffic).
    std::array<double, models::kGroupKinds> comm_s{};
    double comm(models::GroupKind g) const { return comm_s[static_cast<size_t>(g)]; }
    double exposed_comm_s = 0;         // some comm stream busy while compute is idle
    double idle_s = 0;                 // nothing running on this stage (pipeline bubble)
    int peak_in_flight = 0;            // micro-batch chunks whose activations are alive at the peak
    double activations_offloaded = 0;  // stack.activation_offload ssd: the offloadable share offloaded
    models::MemoryBreakdown memory;
};

struct StepReport {
    double step_time_s = 0;
    double tokens_per_s_per_gpu = 0;
    double model_flops_per_step = 0;  // 3 x forward FLOPs (model convention, no recompute)
    double model_tflops_per_gpu = 0;
    double mfu = 0;              // vs the dense peak of the plan's GEMM dtype
    double bubble_fraction = 0;  // mean over stages of idle / step
    // Packed documents (training.documents): the busiest data-parallel rank's attention time over
    // unpacked sequences', and over the mean rank's; both 1 without packing.
    double packed_attention_scale = 1, packing_imbalance = 1;
    double exposed_comm_s = 0;     // mean over stages
    double peak_memory_bytes = 0;  // max over stages
    double memory_capacity_bytes = 0;
    bool out_of_memory = false;
    std::vector<StageReport> stages;
    // The group kinds the step moved data over (a communication stream each, in GroupKind order);
    // the expert data-parallel group's traffic counts as data-parallel.
    std::vector<models::GroupKind> comm_kinds;
    uint64_t events = 0;
    size_t tasks = 0;
    size_t graph_bytes = 0;  // the replay's task graph (sim::TaskGraph::memory_bytes), for benchmarks
    // On a flow network (hardware/network/simgrid_network.h) the step's transfers ran as flows
    // (hardware/network/transfer_timer.h): how many did on the shared session, and their flows
    // (transfers on links of their own are timed alone, outside it).
    uint64_t flow_transfers = 0;
    uint64_t flows = 0;
    // How each op class was priced; op_sources.outside_all(): the ops a cost table left to the
    // roofline (sorted, unique).
    OpSources op_sources;
};

struct StepInputs {
    const models::ModelSpec& model;
    const hardware::ClusterSpec& cluster;
    const TrainingPlan& plan;
    const models::CostModel& cost;
    const hardware::NetworkModel& network;
    const PipelineSchedule* schedule = nullptr;  // null: the plan's, from the registry
};

// Runs the replay. `plan` must have passed plans::check_training_plan. If `trace` is non-null,
// writes the Chrome trace-event timeline to it.
StepReport simulate_training_step(const StepInputs& in, std::ostream* trace = nullptr);

struct StepCommunicators;

// What simulate_training_step does, in pieces, for a driver that runs several jobs on one engine
// and one fabric (shared_fabric.h): the step laid on a graph of `sim` with its communication tasks
// handed to the network's timer, then (after the engine ran) its report. `in` must outlive it.
class StepReplay {
public:
    // Lays the step and hands every communication task to `timer` (step_transfers.h; only to a
    // timer that times tasks: the closed form needs no list). `rank_of`: the cluster GPU of each
    // of the job's ranks (empty: the first GPUs in order). `known`: the job's communicators from an
    // earlier step, reused and completed.
    StepReplay(const StepInputs& in, sim::Simulator& sim, hardware::TransferTimer& timer,
               const std::vector<int>& rank_of = {}, StepCommunicators* known = nullptr);
    ~StepReplay();
    StepReplay(const StepReplay&) = delete;
    StepReplay& operator=(const StepReplay&) = delete;

    sim::TaskGraph& graph();
    // After the engine ran: the step's report (`events`: the engine's, shared by every job on it).
    StepReport report(const sim::Simulator& sim, std::ostream* trace = nullptr) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace fathom::workloads
