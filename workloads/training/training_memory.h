#pragma once
// Peak device memory of a training plan, per pipeline stage, as a pure estimate: callable before
// (and without) any simulation, so a plan searcher can prune plans that do not fit. The model is
// models/memory/memory_model.h with the activations of models/memory/activation_memory.h; the
// number of micro-batches in flight at the peak comes from the schedule's actual order.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "models/memory/memory_model.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/training_plan.h"

#include <vector>

namespace fathom::workloads {

struct StageMemory {
    int layers = 0;          // transformer layers the stage holds
    int peak_in_flight = 0;  // micro-batch chunks whose activations are alive at the peak
    double offloaded = 0;    // stack.activation_offload ssd: the fraction of the offloadable activations offloaded
    models::MemoryBreakdown memory;
};

struct TrainingMemory {
    std::vector<StageMemory> stages;
    double peak_bytes = 0;  // worst stage
    double capacity_bytes = 0;
    bool out_of_memory = false;
};

// Activation offload to the nodes' SSDs (stack.activation_offload: ssd; SSDTrain, papers.md T69):
// the activations a micro-batch chunk leaves for its backward pass are written to the SSDs as its
// forward pass makes them and read back ahead of its backward pass. On the device stay two layers
// of one chunk (the one computing and the one prefetched) and whatever the drives cannot move in
// time: of the rest, a fraction f = min(1, T / (B (1/W + 1/R))) goes, T the stage's compute time
// in a step, B the bytes its chunks would offload in a step, W and R a GPU's share of its node's
// SSD write and read bandwidth (each at most its PCIe link's). The transfers overlap the compute by
// that choice, so the step's time is unchanged (their share of the PCIe link with the NICs'
// traffic is not modelled). Without stage compute times (a pure estimate, before the replay: plan
// pruning) f = 1, the least memory the plan can need, so pruning stays exact.
//
// `plan` must have passed plans::check_training_plan. The schedule defaults to the plan's;
// stage_compute_s, when given, holds each stage's compute time in a step.
TrainingMemory estimate_training_memory(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                        const TrainingPlan& plan, const PipelineSchedule* schedule = nullptr,
                                        const std::vector<double>* stage_compute_s = nullptr);

}  // namespace fathom::workloads
