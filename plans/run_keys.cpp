// The run.* keys: a whole training run to its target (plans/run_request.h).
#include "plans/key_decl.h"
#include "plans/run_request.h"

namespace fathom::plans {

using namespace key_decl;

// Declarative table: the run.* keys, in the order the key reference lists them.
const std::vector<Key<RunRequest>>& run_keys() {
    using R = RunRequest;
    static const std::vector<Key<R>> keys = finish<R>({
        {Decl("run.target_tokens", KeyType::Number,
              "tokens to train (whole steps of the global batch, rounded up); or give run.target_steps or "
              "run.target_time")
             .range(1, 1e18)
             .by_default("one of the three is required"),
         member<&R::target_tokens>()},
        {Decl("run.target_steps", KeyType::Integer,
              "optimizer steps to train; or give run.target_tokens or run.target_time")
             .range(1, 1e15)
             .by_default("one of the three is required"),
         member<&R::target_steps>()},
        {Decl("run.target_time", KeyType::Quantity,
              "productive training time (whole steps, rounded up; a window of a run, as reliability reports "
              "count it); or give run.target_tokens or run.target_steps")
             .unit(sim::Dimension::Time)
             .range(1e-9, 3.2e9)
             .by_default("one of the three is required"),
         member<&R::target_time_s>()},
        {Decl("run.trained_tokens", KeyType::Number,
              "tokens already trained (a run resumed from its last checkpoint): the run simulates the rest")
             .range(0, 1e18),
         member<&R::trained_tokens>()},
        {Decl("run.failures", KeyType::Text,
              "failure-rate profile id (`fathom list hardware`: published interruption counts per root cause, scaled "
              "to the job's GPUs), or `none`")
             .required(),
         member<&R::failures>()},
        {Decl("run.failure_scale", KeyType::Number, "multiplies every cause's rate (a more or less reliable fleet)")
             .range(0, 1e6),
         member<&R::failure_scale>()},
        {Decl("run.failure_shape", KeyType::Number,
              "gaps between failures: 1, exponential (a Poisson process); else Weibull of this shape and the "
              "same mean, renewed at each restart (Schroeder and Gibson, DSN 2006, fit 0.7-0.8 to HPC systems)")
             .range(0.1, 10),
         member<&R::failure_shape>()},
        {Decl("run.checkpoint_interval", KeyType::Quantity,
              "training time between checkpoint starts, rounded up to whole steps")
             .unit(sim::Dimension::Time)
             .range(1e-9, 3.2e7)
             .by_default("the Young/Daly optimum, at least one write"),
         member<&R::checkpoint_interval_s>()},
        {Decl("run.checkpoint_every", KeyType::Integer,
              "or a checkpoint every N optimizer steps (Megatron-LM's --save-interval, DeepSpeed's save loop); not "
              "with run.checkpoint_interval")
             .range(1, 1e12)
             .by_default("run.checkpoint_interval's"),
         member<&R::checkpoint_every>()},
        {Decl("run.checkpoint_method", KeyType::Choice,
              "sync: training stalls for the whole write; async: for the snapshot to host memory over PCIe, the "
              "write to the tier drains beside training")
             .choices_of<CheckpointMethod>(),
         member<&R::method>()},
        {Decl("run.checkpoint_tier", KeyType::Choice,
              "where checkpoints are written: the nodes' SSDs (cluster.ssd), the shared file system "
              "(cluster.storage), or peer nodes' host memory over the NICs (cluster.host_memory; Gemini-style); "
              "auto: the file system when the cluster has one, else the SSDs")
             .choices_of<CheckpointTier>(),
         member<&R::tier>()},
        {Decl("run.checkpoint_layout", KeyType::Choice,
              "which ranks write the checkpoint: even, an equal share each (Megatron-Core's and PyTorch DCP's fully "
              "parallel save); first_replica, DeepSpeed's engine: data-parallel rank 0 alone saves the model states "
              "(with ZeRO 0 the optimizer state too), every rank its ZeRO optimizer shard, and the most loaded rank "
              "bounds the snapshot and the writer")
             .choices_of<CheckpointLayout>(),
         member<&R::layout>()},
        {Decl("run.checkpoint_writer", KeyType::Text,
              "the software writing each rank's share (`fathom list writers`): one rank writes no faster than its "
              "rate (torch-save: DeepSpeed's default engine, a single pickling stream a rank)")
             .by_default("none: the tier's and links' bandwidths alone (a parallel writer such as Megatron-Core's or "
                         "PyTorch DCP's)"),
         member<&R::writer>()},
        {Decl("run.memory_replicas", KeyType::Integer,
              "checkpoint_tier memory: the other nodes holding a copy of each node's share (a failure loses its "
              "own node's memory; losing every copy at once is not modelled)")
             .range(1, 64),
         member<&R::memory_replicas>()},
        {Decl("run.ssd_replicas", KeyType::Integer,
              "checkpoint_tier ssd: other nodes' SSDs holding a copy of each node's share, sent over the NICs "
              "(NVIDIA Resiliency Extension's local checkpoints with replication); with none a node's failure "
              "loses its share, and the job goes back to the last persisted checkpoint (run.persist_every) or the "
              "start")
             .range(0, 64),
         member<&R::ssd_replicas>()},
        {Decl("run.persist_every", KeyType::Integer,
              "checkpoint_tier ssd or memory: every Nth checkpoint also drains to the shared file system "
              "(cluster.storage) beside training, a level that survives any failure (multi-level checkpoints: "
              "DataStates-LLM, Gemini)")
             .range(1, 1e9)
             .by_default("none"),
         member<&R::persist_every>()},
        {Decl("run.detect", KeyType::Quantity, "from a failure until the job is known to have stopped")
             .unit(sim::Dimension::Time)
             .range(0, 3.2e7)
             .required(),
         member<&R::detect_s>()},
        {Decl("run.restart", KeyType::Quantity,
              "from then until training resumes, before loading the checkpoint (rescheduling, containers, "
              "communicator init)")
             .unit(sim::Dimension::Time)
             .range(0, 3.2e7)
             .required(),
         member<&R::restart_s>()},
        {Decl("run.stragglers_per_node_day", KeyType::Number,
              "slow nodes (throttling, a degraded link) appearing per node and day of training; no published "
              "rate exists (MegaScale found ~0.5% of machines slow at a time): with run.straggler_slowdown and "
              "run.straggler_detect")
             .range(0, 1e3)
             .by_default("none"),
         member<&R::stragglers_per_node_day>()},
        {Decl("run.straggler_slowdown", KeyType::Number,
              "step time x this while a straggler is present (a synchronous step runs at its slowest rank)")
             .range(1, 100)
             .by_default("required with stragglers"),
         member<&R::straggler_slowdown>()},
        {Decl("run.straggler_detect", KeyType::Quantity,
              "from a straggler's onset until its node is evicted (a restart from the last durable checkpoint)")
             .unit(sim::Dimension::Time)
             .range(0, 3.2e9)
             .by_default("required with stragglers"),
         member<&R::straggler_detect_s>()},
        {Decl("run.spare_nodes", KeyType::Integer,
              "healthy nodes standing by: a hardware failure sends its node to repair (run.repair), a spare "
              "takes its place, and with none left the restart waits for a node back")
             .range(0, 1e9)
             .by_default("unlimited (a replacement always at hand)"),
         member<&R::spare_nodes>()},
        {Decl("run.repair", KeyType::Quantity, "a failed node's time out for repair (with run.spare_nodes)")
             .unit(sim::Dimension::Time)
             .range(0, 3.2e9)
             .by_default("required with run.spare_nodes"),
         member<&R::repair_s>()},
        {Decl("run.recovery", KeyType::Choice,
              "after a failure: restart the job from its last durable checkpoint; or elastic: go on without the "
              "failed node's data-parallel replicas, the global batch kept (TorchFT, ElasWave), until they rejoin "
              "(a spare or the repaired node, restarted, its state copied from a peer over the NICs)")
             .choices_of<Recovery>(),
         member<&R::recovery>()},
        {Decl("run.reconfigure", KeyType::Quantity,
              "recovery elastic: the job's pause as replicas leave or rejoin (communicator rebuild: ElasWave "
              "reports under one second)")
             .unit(sim::Dimension::Time)
             .range(0, 3.2e7)
             .by_default("required with recovery elastic, or a search.recovery listing it"),
         member<&R::reconfigure_s>()},
        {Decl("run.seeds", KeyType::Integer, "simulated runs (seeds scenario seed, +1, ...) for the percentiles")
             .range(1, 100000),
         member<&R::seeds>()},
    });
    return keys;
}

}  // namespace fathom::plans
