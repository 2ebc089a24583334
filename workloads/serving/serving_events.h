#pragma once
// What the serving engine emits as it runs, for observers: the metric collectors and the timeline
// of workloads/metrics/ subscribe to these signals (sim/signal.h: slots run synchronously, in
// connection order, inside the emitting event), as training's collectors subscribe to the task
// graph. The engine keeps no statistics itself.
//
// Times are the engine's clock (sim::Time, picoseconds). Replicas are numbered over all simulated
// pools in the order ServingPlan::pools() lists them (`replica`), and each is placed on the ranks
// from `first_rank` on (the timeline's process id).
#include "sim/signal.h"
#include "sim/simulator.h"
#include "sim/time.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/sequence.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fathom::workloads::serving {

// A batch launched on a replica: it runs from `start` to `end` through the replica's pipeline.
struct IterationEvent {
    int replica = 0;
    int first_rank = 0;
    sim::Time start, end;
    const Batch& batch;
    const IterationShape& shape;
};

// A token a sequence sampled after its first one, and when its previous token came.
struct NextToken {
    const Sequence* seq = nullptr;
    sim::Time previous;
};

// The tokens after their sequences' first that a completed batch sampled at `t`, in the batch's
// order (first tokens are in each sequence's first_token). One event per batch, not per token:
// tokens are the engine's most frequent event.
struct TokensEvent {
    sim::Time t;
    const std::vector<NextToken>& tokens;
};

// The KV blocks a replica's sequences reference at time `t`.
struct KvUseEvent {
    int replica = 0;
    int first_rank = 0;
    sim::Time t;
    int64_t used = 0;
};

struct ServingSignals {
    sim::Signal<const Sequence&> arrived;              // admitted to its first pool (s.arrival)
    sim::Signal<const TokensEvent&> next_tokens;       // a batch's tokens after its sequences' first
    sim::Signal<const Sequence&> kv_received;          // its KV reached the decode pool (s.kv_sent, s.kv_received)
    sim::Signal<const Sequence&, sim::Time> finished;  // its last token
    sim::Signal<const IterationEvent&> iteration;      // a batch launched
    sim::Signal<const KvUseEvent&> kv_use;             // a replica's KV use, at each scheduling decision
    sim::Signal<const KvUseEvent&> iteration_done;     // a batch completed (KV use after its releases)
};

// A time in seconds (an arrival, the end of an iteration priced in seconds) on the engine's clock:
// rounded to the picosecond once, never before now. Serving has always converted this way, at the
// instant an event is scheduled, from the sum taken in seconds; keeping it keeps every event time.
// The clamp compares engine times: now's trip through seconds (a double) can round below now once
// the clock passes 2^53 ps (about 2.5 hours), which scheduled an event in the past.
inline sim::Time engine_time(const sim::Simulator& sim, double seconds) {
    return std::max(sim::Time::from_seconds(std::max(seconds, 0.0)), sim.now());
}

}  // namespace fathom::workloads::serving
