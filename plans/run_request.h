#pragma once
// A whole training run as a scenario's `run` section asks for it (the run.* keys, plans/keys.h):
// the target, the failure-rate profile, the checkpoint policy and the recovery costs. plans/run.h
// turns it, with the step the step model priced, into the run engine's spec.
#include "sim/enum_names.h"

#include <cstdint>
#include <string>

namespace fathom::plans {

// Synchronous: training stalls for the whole write. Asynchronous: it stalls for the snapshot to
// host memory over PCIe, and the write to the tier drains beside training.
enum class CheckpointMethod { Sync, Async };
constexpr auto enum_names(CheckpointMethod) {
    return sim::name_table<CheckpointMethod>({{CheckpointMethod::Sync, "sync"}, {CheckpointMethod::Async, "async"}});
}
// Where checkpoints are written: the nodes' local SSDs (cluster.ssd) or the shared file system
// (cluster.storage); `auto`: the file system when the cluster has one, else the SSDs.
// `memory`: peer nodes' host memory (Gemini, SOSP 2023): each node's share copied to
// run.memory_replicas other nodes over its NICs, kept by an agent outside the training processes.
enum class CheckpointTier { Auto, Ssd, Storage, Memory };
constexpr auto enum_names(CheckpointTier) {
    return sim::name_table<CheckpointTier>({{CheckpointTier::Auto, "auto"},
                                            {CheckpointTier::Ssd, "ssd"},
                                            {CheckpointTier::Storage, "storage"},
                                            {CheckpointTier::Memory, "memory"}});
}

// After a failure: restart the whole job from its last durable checkpoint, or go on without the
// failed node's data-parallel replicas until they rejoin (workloads/run/training_run.h, Elastic).
enum class Recovery { Restart, Elastic };
constexpr auto enum_names(Recovery) {
    return sim::name_table<Recovery>({{Recovery::Restart, "restart"}, {Recovery::Elastic, "elastic"}});
}

// Which ranks write a checkpoint's bytes. even: every rank an equal share (Megatron-Core's and
// PyTorch DCP's fully parallel save). first_replica: DeepSpeed's engine, where only data-parallel
// rank 0 saves the model states (the bf16 weights; with ZeRO stage 0, the optimizer state too) and
// every rank its ZeRO optimizer shard, so the first replica's ranks write the most and bound a
// synchronous step.
enum class CheckpointLayout { Even, FirstReplica };
constexpr auto enum_names(CheckpointLayout) {
    return sim::name_table<CheckpointLayout>(
        {{CheckpointLayout::Even, "even"}, {CheckpointLayout::FirstReplica, "first_replica"}});
}

struct RunRequest {
    double target_tokens = 0;          // 0: not given
    int64_t target_steps = 0;          // 0: not given
    double target_time_s = 0;          // productive training time; 0: not given (exactly one of the three is)
    double trained_tokens = 0;         // already trained (a run resumed from a checkpoint)
    std::string failures;              // failure-rate profile id (hardware/catalog/reliability), or "none"
    double failure_scale = 1;          // multiplies every cause's rate (sensitivity)
    double checkpoint_interval_s = 0;  // 0: the Young/Daly optimum
    int64_t checkpoint_every = 0;      // or every N steps (frameworks' save interval); 0: not given
    CheckpointMethod method = CheckpointMethod::Async;
    CheckpointTier tier = CheckpointTier::Auto;
    CheckpointLayout layout = CheckpointLayout::Even;
    std::string writer;           // checkpoint writer id (workloads/checkpoint_writers); empty: none
    double writer_rank_rate = 0;  // its rate, resolved from the catalog; 0: no writer's bound
    double detect_s = 0;
    double restart_s = 0;
    int memory_replicas = 1;             // tier memory: the peers holding each node's share
    int ssd_replicas = 0;                // tier ssd: the peers' SSDs holding a copy of each node's share
    int64_t persist_every = 0;           // every Nth checkpoint also to the shared file system (0: none)
    double failure_shape = 1;            // Weibull shape of the gaps between failures (1: exponential)
    double stragglers_per_node_day = 0;  // 0: none
    double straggler_slowdown = 1;
    double straggler_detect_s = 0;
    int64_t spare_nodes = -1;  // -1: unlimited (a replacement always at hand)
    double repair_s = 0;       // a failed node's time out (with spare_nodes)
    Recovery recovery = Recovery::Restart;
    double reconfigure_s = -1;  // elastic: the job's pause as replicas leave or rejoin; -1: not given
    int seeds = 100;
};

}  // namespace fathom::plans
