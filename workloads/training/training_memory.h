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
    models::MemoryBreakdown memory;
};

struct TrainingMemory {
    std::vector<StageMemory> stages;
    double peak_bytes = 0;  // worst stage
    double capacity_bytes = 0;
    bool out_of_memory = false;
};

// `plan` must have passed plans::check_training_plan. The schedule defaults to the plan's.
TrainingMemory estimate_training_memory(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                        const TrainingPlan& plan, const PipelineSchedule* schedule = nullptr);

}  // namespace fathom::workloads
