#pragma once
// What an RL scenario predicts: the iteration time and its breakdown, throughput, each pool's use,
// the staleness of the batches, and the first iteration's rollout (a serving report) and policy
// update (a training step report) in detail.
#include "workloads/rl/rl_pipeline.h"
#include "workloads/serving/serving_metrics.h"
#include "workloads/training/training_step.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fathom::workloads::rl {

struct RlReport {
    int64_t rollout_gpus = 0, trainer_gpus = 0, gpus = 0;  // colocated: all three the cluster's
    std::vector<PhaseTimes> phases;                        // per simulated iteration
    PhaseTimes mean;                                       // their means
    PipelineResult pipeline;
    double iteration_s = 0;    // steady state (pipeline.iteration_s)
    double samples_per_s = 0;  // answers trained per second
    double samples_per_s_per_gpu = 0;
    double response_tokens_per_s = 0;    // generated tokens trained per second
    double train_tokens_per_s = 0;       // tokens the update ran per second (after any prompt sharing)
    double mean_response_tokens = 0;     // over the simulated batches
    double shared_prompt_reduction = 1;  // rho of the first batch (DualKV's factor, 1 when off)
    int64_t update_sequences = 0;        // packed sequences per optimizer step (first iteration)
    std::string trainer_layout;          // the update's plan, described (TrainingPlan::describe)
    int64_t optimizer_steps = 0;         // per iteration: minibatches x epochs
    double forward_share = 0;            // a forward pass's share of the update step (the log-prob passes' price)
    double sync_bytes = 0;               // the policy's weights sent per sync, bytes in all
    bool out_of_memory = false;  // the update step does not fit (a verdict; the times are then of the plan as given)
    serving::ServingReport rollout;  // the first iteration's rollout
    StepReport update;               // the first iteration's policy-update step
};

}  // namespace fathom::workloads::rl
