#pragma once
// A whole training run at day scale (issue 38): the step time comes from the step model (priced
// once per plan, outside this file); the run is an event stream of failures, checkpoint writes and
// restarts, never of steps, so a 54-day run costs one event per failure and per checkpoint.
//
// The model, as the reliability literature states it (Young 1974, Daly 2006; Meta's "Revisiting
// Reliability in Large-Scale ML Research Clusters", 2024):
//  - The job progresses in productive seconds; it reaches its target after target_steps x step_s
//    of them. A checkpoint starts after every `interval_s` of progress: training stalls stall_s
//    (a synchronous write: the whole write; an asynchronous one: the snapshot to host memory), and
//    the checkpoint becomes durable durable_s after it started (synchronous: = stall_s;
//    asynchronous: the snapshot plus the drain to its tier, which runs beside training).
//  - Failures of each cause arrive as a Poisson process of the whole job's rate for that cause
//    (or, with failure_shape != 1, the job's failures as a Weibull renewal process of the same
//    mean rate, each failure's cause drawn in proportion to the rates) while the job is up
//    (running or stalled on a checkpoint); a failure of any rank stops the synchronous job.
//    Failures during detection, restart and load are not drawn (the job's processes are not up;
//    Daly's model makes the same choice).
//  - A failure rolls the job back to the last durable checkpoint (the work since is lost), then
//    costs detect_s + restart_s + load_s before training resumes.
//  - A failure that takes a node sends it to repair; with a finite spare pool the restart waits for
//    a repaired node when no spare is healthy (SparePool).
//  - Stragglers slow every step until they are evicted (Stragglers).
//  - With elastic recovery (Elastic) a failure drops the failed node's data-parallel replicas and
//    the job goes on without them until they rejoin.
//  - Checkpoints on nodes' own SSDs are lost with a node; persisted ones survive (CheckpointPolicy).
//  - An asynchronous drain over the NICs slows the steps it overlaps (CheckpointPolicy).
//
// Draws come from the named streams "run.failure" (the gaps), "run.cause" (which cause) and
// "run.straggler" (onsets) of sim::RandomStreams: the same spec and seed give the same run on every
// platform, and a spec without stragglers draws what it did before they were modelled.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fathom::workloads::run {

struct FailureCause {
    std::string name;        // "gpu", "hbm", "network", "host", "software", ...
    double per_hour = 0;     // failures per hour of the whole job (all its components of this kind)
    bool takes_node = true;  // the failed node leaves for repair (hardware); false: a restart mends it
};

// The nodes that stand in for failed ones. Unlimited (spares < 0): a replacement is always at
// hand, its swap part of the restart. Else a failure that takes a node sends it to repair for
// repair_s, a spare takes its place if one is healthy, and without one the job waits for the
// first repair to finish before it restarts.
struct SparePool {
    int64_t spares = -1;
    double repair_s = 0;
};

// Slow ranks (thermal or power throttling, a degraded link): a synchronous step runs at the slowest,
// so while one is present every step takes `slowdown` times as long. They appear as a Poisson
// process of the job's rate while it trains; monitoring flags one detect_s later (MegaScale, NSDI
// 2024 section 5; C4), and the job evicts its node: a restart from the last durable checkpoint
// without the failure's detection (the node goes to repair like a failed one).
struct Stragglers {
    double per_hour = 0;  // the whole job's rate
    double slowdown = 1;  // step time x this while one is present
    double detect_s = 0;  // from its onset to its eviction
};

// Elastic recovery (TorchFT's replica groups; ElasWave, papers.md T74): a failure drops the
// data-parallel replicas on the failed node, and the others go on with the global batch kept (each
// running more micro-batches), slower, until the node's replicas rejoin: after the node is back (a
// spare at once, else a repaired node, as SparePool says; a failure that leaves the node, a software
// one, after its processes restart), its restart, and a live copy of its training state from a
// healthy peer beside training. The job pauses reconfigure_s when replicas leave (after the
// failure's detection) and when they rejoin; the step in progress is lost, not the work since the
// last checkpoint. A failure that would leave a layout that cannot run (slowdown 0: no replica
// left, or it does not fit in memory) restarts the whole job as without elastic recovery, and the
// restart brings every replica back. The checkpoint's stall is taken as the full job's.
struct Elastic {
    bool enabled = false;
    double reconfigure_s = 0;  // the job's pause as replicas leave or rejoin (communicator rebuild)
    double copy_s = 0;         // a rejoining node's state copied from a peer
    // The step time with `out` nodes' replicas out over the full job's (>= 1), or 0 when that layout
    // cannot run. Called once per depth change; out >= 1.
    std::function<double(int out)> slowdown;
};

// Multi-level checkpoints: on a node-local tier (each node's share on its own SSDs, no copy
// elsewhere) a checkpoint is lost with any of its nodes, so a failure that takes a node (or an
// eviction) rolls the job back to the last persisted checkpoint, loaded from the persistent tier,
// or to the start without one; a failure that leaves the nodes reads the local one. Every
// persist_every-th checkpoint also drains to the persistent tier (the shared file system), beside
// training, persisted persist_s after its start. On other tiers every durable checkpoint survives.
struct CheckpointPolicy {
    double interval_s = 0;  // progress between checkpoint starts; 0: no checkpoints (a failure restarts from 0)
    double stall_s = 0;     // training stalls this long per checkpoint
    double durable_s = 0;   // from the start until durable (>= stall_s)
    double load_s = 0;      // reading it back after a restart
    bool node_local = false;
    int64_t persist_every = 0;  // node_local: every Nth checkpoint also persisted (0: none)
    double persist_s = 0;       // from the start until persisted
    double persist_load_s = 0;  // reading a persisted one back
    // An asynchronous drain shares the nodes' NICs with training's own traffic: while one is in
    // flight (from the end of the stall until durable) every step takes this times as long.
    double drain_slowdown = 1;
};

struct RunSpec {
    double step_s = 0;         // one optimizer step (the step model's answer)
    int64_t target_steps = 0;  // steps to the target
    std::vector<FailureCause> failures;
    CheckpointPolicy checkpoint;
    double detect_s = 0;   // from a failure to the job's stop being noticed
    double restart_s = 0;  // rescheduling, containers, communicator init
    SparePool pool;
    Stragglers stragglers;
    Elastic elastic;
    // The gaps between failures: exponential (1, a Poisson process), or Weibull of this shape with
    // the same mean, renewed at each restart (< 1: failures cluster after a restart).
    double failure_shape = 1;
    // Whole checkpoint cycles between failures pass as one event (false: each checkpoint is one, the
    // reference the tests compare the shortcut with).
    bool batch_cycles = true;

    // Empty when the spec can run, else why not, naming the field.
    std::string check() const;
};

struct RunReport {
    double wall_s = 0;        // time to target
    double productive_s = 0;  // target_steps x step_s
    double ettr = 0;          // effective training time ratio: productive_s / wall_s
    // Where the rest of the wall clock went.
    double lost_work_s = 0;  // progress rolled back by failures
    double detect_s = 0, restart_s = 0, load_s = 0;
    double checkpoint_stall_s = 0;
    double node_wait_s = 0;              // restarts held up for a node out of repair (no healthy spare)
    double straggler_s = 0;              // wall clock lost to slow steps (each slow second's 1 - 1/slowdown)
    double drain_s = 0;                  // wall clock lost to steps slowed by checkpoint drains
    int64_t evictions = 0;               // stragglers evicted (their restarts are in the losses above)
    double reconfigure_s = 0;            // elastic: the job's pauses as replicas left and rejoined
    double degraded_s = 0;               // elastic: wall clock lost to slower steps on fewer replicas
    int64_t drops = 0;                   // elastic: failures and evictions the job went on through
    int64_t checkpoints = 0;             // started
    int64_t local_losses = 0;            // node-local tier: rollbacks past a local checkpoint lost with a node
    std::vector<int64_t> interruptions;  // per cause, in RunSpec::failures' order
    int64_t failures() const;
    // Failures and evictions that restarted the whole job.
    int64_t restarts() const { return failures() + evictions - drops; }
};

// What a run did, in order, for its timeline: training (slow behind a straggler or on fewer
// replicas), checkpoint stalls (or `checkpoints` whole cycles of training and checkpoints passed at
// once), failures (an instant, with their cause's index), and the detection, restart and load
// after each, or an elastic drop's reconfiguration and the replicas' rejoin.
struct RunEvent {
    enum class Kind {
        Train,
        SlowTrain,
        Checkpoint,
        Cycles,
        Failure,
        Eviction,
        Detect,
        NodeWait,
        Restart,
        Load,
        Reconfigure,  // elastic: replicas leaving or rejoining
        Rejoin        // elastic: an instant, replicas back
    };
    Kind kind = Kind::Train;
    double start_s = 0, duration_s = 0;
    int cause = -1;           // Failure
    int64_t checkpoints = 0;  // Cycles
};

// One run to its target; with `log`, its events appended there.
RunReport simulate_run(const RunSpec& spec, uint64_t seed, std::vector<RunEvent>* log = nullptr);

// Closed forms for the synchronous case (durable_s = stall_s), failures of total rate lambda per
// second while up, recovery r = detect + restart + load:
//  - the expected wall time to finish a segment of `a` seconds of up-time that a failure restarts
//    from its beginning: (1/lambda + r) (e^(lambda a) - 1);
//  - a run of target T: checkpoints at tau, 2 tau, ... below T, so m = ceil(T / tau) - 1 segments of
//    tau + stall and a last one of T - m tau; the first segment's recovery has no load (nothing to
//    load), the others' do.
double expected_segment_s(double a, double lambda, double recovery_s);
double expected_sync_run_s(const RunSpec& spec);
// Young/Daly's first-order optimum interval: sqrt(2 x write / lambda).
double young_daly_interval_s(double write_s, double failures_per_s);

}  // namespace fathom::workloads::run
