#pragma once
// A whole training run from a scenario's `run` section (issue 38): the step the step model priced
// once, the checkpoint's size from the plan and its write, snapshot and load times from the
// cluster's PCIe links and storage tiers, the failure rates of a published fleet scaled to the
// job's GPUs; then the run engine (workloads/run/training_run.h) over seeds.
#include "plans/catalog.h"
#include "plans/constraints.h"
#include "plans/run_request.h"
#include "plans/scenario.h"
#include "workloads/run/training_run.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fathom::plans {

// One checkpoint of the job's training state on its tier.
//  - Its size: bf16 weights (2 bytes a parameter) and the fp32 master weights and Adam moments
//    (12 bytes a trained parameter), each written once however the ranks replicate them
//    (Megatron-Core's and PyTorch DCP's fully parallel save spread the writes over all ranks), so
//    every GPU writes bytes / GPUs; with DeepSpeed's layout (run.checkpoint_layout first_replica)
//    the first data-parallel replica's ranks write more (checkpoint_rank_bytes), and the most
//    loaded rank bounds the snapshot and the writer.
//  - The snapshot: each GPU copies its share to host memory over its own PCIe link (the link's
//    achievable bandwidth). The write: the nodes' SSDs striped (bytes / nodes / (ssds x write
//    bandwidth)), or the shared file system (the slower of its aggregate write bandwidth and the
//    nodes' clients together), and no faster than the checkpoint writer lets one rank write its
//    share (run.checkpoint_writer). A synchronous checkpoint stalls for snapshot + write; an
//    asynchronous one for the snapshot, durable after the write. The load after a restart reads it
//    back from its tier and copies it to the GPUs.
//  - On the SSDs each node's share is lost with the node unless run.ssd_replicas peers hold a
//    copy (sent over the NICs); every run.persist_every-th checkpoint can also drain to the file
//    system (multi-level), which survives anything.
//  - An asynchronous drain over the NICs takes its share of them from training (drain_nic_share):
//    the steps it overlaps are priced by the step model with the NICs that are left.
struct CheckpointCost {
    CheckpointMethod method = CheckpointMethod::Async;
    CheckpointTier tier = CheckpointTier::Ssd;
    std::string tier_id;  // the SSD's or the file system's catalog id
    double bytes = 0;
    double rank_bytes = 0;  // the most any rank writes (bytes / GPUs with the even layout)
    double snapshot_s = 0, write_s = 0, read_s = 0;
    // With a checkpoint writer (run.checkpoint_writer): a rank's whole save of its share at the
    // writer's rate, from device memory to the file (as such rates are measured), so the write
    // takes at least writer_s - snapshot_s after the snapshot. An asynchronous writer's drain is
    // taken at the same rate (an estimate: its snapshot is a pinned copy, the rest the same).
    double writer_s = 0;
    double stall_s = 0, durable_s = 0, load_s = 0;
    // Multi-level: the tier loses a node's share with the node (the SSDs without copies elsewhere);
    // every persist_every-th checkpoint also drains to the shared file system (persist_write_s),
    // persisted persist_s after its start, and loaded back in persist_load_s.
    bool node_local = false;
    int ssd_replicas = 0;
    int64_t persist_every = 0;
    double persist_write_s = 0, persist_s = 0, persist_load_s = 0;
    // An asynchronous drain's traffic over each node's NICs (to the file system, or to peers'
    // memory or SSDs) and the share of the NICs it takes from training: max-min fair, its own rate
    // (bytes / write_s, bounded by its tier) up to half of them. 0 for synchronous checkpoints
    // (training is stalled) and for a drain to the node's own SSDs (off the NICs; the host's
    // PCIe lanes to the drives are not the GPUs' and NICs' links). The drain's own slowing by
    // training's traffic is not modelled (its write time is its tier's).
    double drain_nic_bytes = 0, drain_nic_share = 0;
};

// The training state a checkpoint holds (above): 2 bytes a parameter and 12 a trained one (the
// mixed-precision Adam states of the ZeRO paper, Rajbhandari et al. 2020, less the gradients).
double checkpoint_bytes(const models::ModelSpec& model, const workloads::TrainingPlan& plan);
// The most bytes any rank writes under `layout` (run.checkpoint_layout): bytes / GPUs when even;
// with DeepSpeed's first_replica, a first-replica rank's share of the weights (2 bytes a parameter
// over the replica's GPUs) and its optimizer shard (12 bytes a trained parameter over all GPUs;
// over the replica's with ZeRO 0; everything over all GPUs with ZeRO 3, whose weights are sharded).
// MoE experts are taken as the dense weights are (an estimate: DeepSpeed saves them per expert
// group).
double checkpoint_rank_bytes(const models::ModelSpec& model, const workloads::TrainingPlan& plan,
                             CheckpointLayout layout);

// The checkpoint's cost for the plan, or violations naming their key: no tier to write to, a tier
// that cannot hold two checkpoints (the last durable one stays while the next is written), a given
// interval shorter than one write.
struct CheckpointPlan {
    CheckpointCost cost;
    std::vector<Violation> violations;
};
CheckpointPlan plan_checkpoint(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                               const workloads::TrainingPlan& plan, const RunRequest& request);

// Sequences x tokens of one optimizer step.
double tokens_per_step(const workloads::TrainingPlan& plan);
// The steps from trained_tokens to the target, or violations (no target or several, a target
// already reached); a target time needs the step's time (0 before it is known: no steps).
int64_t target_steps(const RunRequest& request, const workloads::TrainingPlan& plan, double step_s,
                     std::vector<Violation>& out);

// What a run takes from the step model beyond its step (plans/run_steps.h): with elastic recovery,
// the step time with `out` failed nodes' replicas out (plans/run_elastic.h's layout; 0 when it
// cannot run: out of memory, a plan check) and the training state a GPU holds (weights and
// optimizer state: what a rejoining node copies from a healthy peer); with asynchronous
// checkpoints, the step while a drain shares the NICs (0: not priced, no slowdown).
struct RunSteps {
    std::function<double(int out)> degraded_step_s;
    double state_bytes_per_gpu = 0;
    double drain_step_s = 0;
};

struct RunPlan {
    workloads::run::RunSpec spec;  // failures per cause, in the profile's order
    CheckpointCost checkpoint;
    std::vector<std::string> categories;  // each cause's category
    std::string profile;                  // the failure-rate profile's id ("none")
    std::string profile_accelerator;      // the device it was measured on
    double tokens_per_step = 0;
    double young_daly_s = 0;  // the first-order optimum interval for the checkpoint's stall (inf: no failures)
    bool interval_given = false;
    std::string interval_key;   // the key that gave it: run.checkpoint_interval or run.checkpoint_every
    int replicas_per_node = 0;  // elastic: the data-parallel replicas a node's failure takes out
    int seeds = 1;
    uint64_t seed = 1;

    double failures_per_hour() const;
};
// The run of a training scenario with a `run` section, its step taking step_s (`steps`: the steps
// on fewer replicas and behind a drain, when the run needs them). Throws the violations as
// plan_error (the scenario parser has already refused those it could see).
RunPlan plan_run(const Scenario& s, double step_s, const Catalog& catalog, const RunSteps& steps = {});

// A run too large to simulate: its expected events over the seeds (about three a failure) past
// `max_events` (1e8: about 3 s here), or a job that fails so often that it almost never finishes a
// checkpoint interval. An empty key: it fits.
Violation check_run_size(const RunPlan& plan, double max_events = 1e8);

// The runs of seeds seed, seed + 1, ...: time to target percentiles and the means of the rest.
struct RunSummary {
    int seeds = 0;
    double wall_mean_s = 0, wall_p10_s = 0, wall_p50_s = 0, wall_p90_s = 0;
    double ettr_mean = 0, ettr_p10 = 0, ettr_p90 = 0;
    // Means over the seeds.
    double lost_work_s = 0, detect_s = 0, node_wait_s = 0, restart_s = 0, load_s = 0, checkpoint_stall_s = 0;
    double checkpoints = 0, failures = 0;
    double straggler_s = 0, evictions = 0;
    double reconfigure_s = 0, degraded_s = 0, drops = 0, restarts = 0;  // elastic drops; whole-job restarts
    double local_losses = 0;            // rollbacks past a local checkpoint lost with its node
    double drain_s = 0;                 // steps slowed by checkpoint drains sharing the NICs
    std::vector<double> interruptions;  // per cause
    // The closed form's expected time to target (synchronous checkpoints, exponential failures,
    // unlimited spares, no stragglers, restarts only, checkpoints that survive a node; else negative).
    double expected_s = -1;
};
RunSummary simulate_runs(const RunPlan& plan);

}  // namespace fathom::plans
