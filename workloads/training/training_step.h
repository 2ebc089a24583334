#pragma once
// Replays one optimizer step of a training plan on the event engine and measures it.
//
// Symmetry: every data-parallel replica and every tensor-parallel rank does the same work, so the
// replay simulates one representative rank per pipeline stage (one DP replica, one TP rank) and
// charges each collective for its full group on the real topology (NetworkModel). Each stage has
// five streams: compute, tp-comm, cp-comm, pp-comm (sends to the neighbouring stage) and dp-comm.
// Per layer and micro-batch the replay issues the layer's compute, its TP collectives (on the
// critical path unless tp_comm_overlap), CP key/value exchanges (concurrent with compute), ZeRO-3
// parameter all-gathers (prefetched one layer ahead) and gradient reduce-scatters; activations
// and gradients cross stages as send/recv tasks; gradient buckets are reduced as the last
// micro-batch's backward produces them; the optimizer step closes the step. Overlap, bubbles and
// exposed communication come out of the replay.
#include <iosfwd>
#include <string>
#include <vector>

#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "models/memory/memory_model.h"
#include "workloads/parallelism.h"

namespace fathom::workloads {

struct StageReport {
    int layers = 0;
    double compute_s = 0;        // compute stream busy (incl. recompute and optimizer)
    double tp_comm_s = 0, cp_comm_s = 0, pp_comm_s = 0, dp_comm_s = 0;  // stream busy times
    double exposed_comm_s = 0;   // some comm stream busy while compute is idle
    double idle_s = 0;           // nothing running on this stage (pipeline bubble)
    int peak_in_flight = 0;      // micro-batch chunks whose activations are alive at the peak
    models::MemoryBreakdown memory;
};

struct StepReport {
    double step_time_s = 0;
    double tokens_per_s_per_gpu = 0;
    double model_flops_per_step = 0;   // 3 x forward FLOPs (model convention, no recompute)
    double model_tflops_per_gpu = 0;
    double mfu = 0;                    // vs the dense peak of the plan's GEMM dtype
    double bubble_fraction = 0;        // mean over stages of idle / step
    double exposed_comm_s = 0;         // mean over stages
    double peak_memory_bytes = 0;      // max over stages
    double memory_capacity_bytes = 0;
    bool out_of_memory = false;
    std::vector<StageReport> stages;
    uint64_t events = 0;
    size_t tasks = 0;
    // Ops whose cost came from outside the calibrated range of a cost table (sorted, unique).
    std::vector<std::string> uncalibrated_ops;
};

struct StepInputs {
    const models::ModelSpec& model;
    const hardware::ClusterSpec& cluster;
    const TrainingPlan& plan;
    const models::CostModel& cost;
    const hardware::NetworkModel& network;
};

// Runs the replay. If `trace` is non-null, writes the Chrome trace-event timeline to it.
StepReport simulate_training_step(const StepInputs& in, std::ostream* trace = nullptr);

}  // namespace fathom::workloads
