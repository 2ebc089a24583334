#include "workloads/run/training_run.h"

#include "sim/random.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace fathom::workloads::run {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

double total_per_hour(const RunSpec& s) {
    double per_hour = 0;
    for (const FailureCause& c : s.failures) per_hour += c.per_hour;
    return per_hour;
}

bool finite_at_least(double x, double least) { return std::isfinite(x) && x >= least; }

// The run's state as the events move it.
struct Run {
    const RunSpec& spec;
    RunReport rep;
    double progress = 0;  // productive seconds done and not lost
    double wall = 0;
    double durable = 0;  // progress of the last durable checkpoint
    double safe = 0;     // ... of the last that survives a node's loss (= durable off node-local tiers)
    struct Pending {
        double progress, durable_at, safe_at;  // a checkpoint written or draining; safe_at inf: never
    };
    std::vector<Pending> pending;
    std::vector<RunEvent>* log = nullptr;
    std::vector<double> repairs;  // when each node in repair returns (a min-heap), finite pools only
    std::vector<double> back;     // elastic: when each node's replicas out rejoin (a min-heap)
    double elastic_factor = 1;    // elastic: step time over the full job's with back.size() nodes out

    int out() const { return static_cast<int>(back.size()); }

    void note(RunEvent::Kind kind, double start, double duration, int cause = -1, int64_t checkpoints = 0) {
        if (log && duration >= 0) log->push_back({kind, start, duration, cause, checkpoints});
    }

    // Checkpoints durable by `wall` move `durable` forward and leave the pending list (settled at
    // each new checkpoint too, so the list holds only those still draining, not the whole run's).
    void settle() {
        const auto done = std::remove_if(pending.begin(), pending.end(), [&](const Pending& p) {
            if (p.durable_at <= wall) durable = std::max(durable, p.progress);
            if (p.safe_at <= wall) safe = std::max(safe, p.progress);
            return p.durable_at <= wall && (p.safe_at <= wall || p.safe_at == kNever);
        });
        pending.erase(done, pending.end());
    }
    // Checkpoints fall at whole intervals of progress: the k-th at k intervals, the persisted ones
    // at multiples of persist_every (a schedule by step, as frameworks' save intervals are; a
    // restart goes back to one of them and keeps it).
    int64_t interval_index(double at_progress) const { return std::llround(at_progress / spec.checkpoint.interval_s); }
    // A checkpoint of the present progress started at `at`.
    void start_checkpoint(double at) {
        const CheckpointPolicy& k = spec.checkpoint;
        const bool persisted = k.persist_every > 0 && interval_index(progress) % k.persist_every == 0;
        const double safe_at = !k.node_local ? at + k.durable_s : persisted ? at + k.persist_s : kNever;
        pending.push_back({progress, at + k.durable_s, safe_at});
    }
    // When the drains in flight end (the latest durable time pending; before now: none).
    double drain_end() const {
        double end = 0;
        for (const Pending& p : pending) end = std::max(end, p.durable_at);
        return end;
    }
    // Whether a failure (cause >= 0) or an eviction (cause < 0) loses the local checkpoints.
    bool loses_local(int cause) const { return spec.checkpoint.node_local && takes_node(cause); }
    // A node's loss on a node-local tier: its share of every checkpoint, written or draining, is
    // gone; the last persisted one is the last that can be read.
    void lose_local() {
        settle();
        pending.clear();
        if (durable > safe) ++rep.local_losses;
        durable = safe;
    }
    // At a checkpoint interval's start, the whole cycles (training, then a checkpoint's stall)
    // before the next failure (`up` seconds away) and below the target pass at once: the event
    // stream stays one event per failure, not per checkpoint. The last such cycle runs as events,
    // so every one passed here is durable before anything can look (a durable time within a cycle).
    // Each cycle's training runs its first stretch behind the drain of the checkpoint before it
    // (the drain ends within it: durable_s <= tau + stall), `lag` longer; the first cycle behind
    // whatever drain is in flight now (none after a restart).
    void pass_cycles(double tau, double target, double& up, double& to_slow, double& next_checkpoint) {
        const double stall = spec.checkpoint.stall_s;
        const CheckpointPolicy& k = spec.checkpoint;
        if (k.durable_s > tau + stall || (k.node_local && k.persist_every > 0 && k.persist_s > tau + stall)) return;
        const double behind = 1 - 1 / k.drain_slowdown;
        const double lag = (k.durable_s - stall) * behind;
        const double first_lag = std::max(0.0, drain_end() - wall) * behind;
        const double cycle = tau + stall + lag;
        // fmin: an infinite interval (no checkpoints) or no stragglers make NaNs here, which it skips.
        const double by_failure = std::fmin(std::floor(up / cycle), std::floor(to_slow / (tau + lag)));
        const double by_target = std::ceil((target - progress) / tau) - 1;
        const double m = std::fmin(by_failure, by_target) - 1;  // the last cycle runs as events
        if (!(m >= 2)) return;
        const double lagged = first_lag + (m - 1) * lag;
        const double start = wall + m * tau + (m - 1) * stall + lagged;  // the m-th checkpoint's start
        // Whatever is pending is durable and persisted within the first cycle; of the m passed,
        // all but the last are durable before it, and the persisted ones safe.
        settle();
        for (const Pending& p : pending)
            if (p.safe_at != kNever) safe = std::max(safe, p.progress);
        pending.clear();
        durable = std::max(durable, progress + (m - 1) * tau);
        if (!k.node_local) safe = durable;
        else if (k.persist_every > 0) {
            const int64_t now = interval_index(progress), last = now + static_cast<int64_t>(m) - 1;
            const int64_t persisted = last / k.persist_every * k.persist_every;  // the last persisted <= last
            if (persisted > now) safe = std::max(safe, progress + static_cast<double>(persisted - now) * tau);
        }
        progress += m * tau;
        start_checkpoint(start);
        const double passed_wall = m * (tau + stall) + lagged;
        note(RunEvent::Kind::Cycles, wall, passed_wall, -1, static_cast<int64_t>(m));
        wall += passed_wall;
        up -= passed_wall;
        to_slow -= m * tau + lagged;
        rep.drain_s += lagged;
        rep.checkpoints += static_cast<int64_t>(m);
        rep.checkpoint_stall_s += m * stall;
        next_checkpoint = progress + tau;
    }
    // A finite pool: the failed node leaves for repair; the job restarts once the nodes in repair
    // are no more than the spares (it is known at once which node failed: the wait overlaps
    // detection).
    double wait_for_node(bool takes_node, double detect) {
        const SparePool& pool = spec.pool;
        if (pool.spares < 0 || !takes_node) return 0;
        auto later = std::greater<double>();
        while (!repairs.empty() && repairs.front() <= wall) {
            std::pop_heap(repairs.begin(), repairs.end(), later);
            repairs.pop_back();
        }
        repairs.push_back(wall + pool.repair_s);
        std::push_heap(repairs.begin(), repairs.end(), later);
        const auto short_by = static_cast<int64_t>(repairs.size()) - pool.spares;
        if (short_by <= 0) return 0;
        // The job restarts when `short_by` nodes are back: the short_by-th earliest return.
        std::vector<double> returns = repairs;
        std::nth_element(returns.begin(), returns.begin() + (short_by - 1), returns.end());
        return std::max(0.0, returns[static_cast<size_t>(short_by - 1)] - wall - detect);
    }
    void count(int cause) {
        if (cause < 0) ++rep.evictions;
        else ++rep.interruptions[static_cast<size_t>(cause)];
    }
    bool takes_node(int cause) const { return cause < 0 || spec.failures[static_cast<size_t>(cause)].takes_node; }
    // Elastic: whether the job can go on with one more node's replicas out.
    bool can_drop() {
        if (!spec.elastic.enabled) return false;
        const double f = spec.elastic.slowdown(out() + 1);
        return f >= 1 && std::isfinite(f);
    }
    // An elastic drop of a failed node (cause >= 0) or an evicted straggler's (cause < 0): the step
    // in progress is lost; the job pauses for detection and reconfiguration and goes on slower; the
    // node's replicas rejoin once it is back (wait_for_node), restarted and copied from a peer.
    void drop(int cause) {
        count(cause);
        ++rep.drops;
        const double steps = std::floor(progress / spec.step_s * (1 + 1e-12));
        const double partial = std::max(0.0, progress - steps * spec.step_s);
        rep.lost_work_s += partial;
        progress -= partial;
        if (loses_local(cause)) lose_local();
        const double detect = cause < 0 ? 0.0 : spec.detect_s;
        const double wait = wait_for_node(takes_node(cause), detect);
        const double pause = detect + spec.elastic.reconfigure_s;
        note(cause < 0 ? RunEvent::Kind::Eviction : RunEvent::Kind::Failure, wall, 0, cause);
        if (detect > 0) note(RunEvent::Kind::Detect, wall, detect);
        note(RunEvent::Kind::Reconfigure, wall + detect, spec.elastic.reconfigure_s);
        rep.detect_s += detect;
        rep.reconfigure_s += spec.elastic.reconfigure_s;
        wall += pause;
        back.push_back(wall + wait + spec.restart_s + spec.elastic.copy_s);
        std::push_heap(back.begin(), back.end(), std::greater<double>());
        elastic_factor = spec.elastic.slowdown(out());
    }
    // Elastic: the earliest node out rejoins now; the job pauses to take its replicas back.
    void rejoin() {
        std::pop_heap(back.begin(), back.end(), std::greater<double>());
        back.pop_back();
        note(RunEvent::Kind::Rejoin, wall, 0);
        note(RunEvent::Kind::Reconfigure, wall, spec.elastic.reconfigure_s);
        wall += spec.elastic.reconfigure_s;
        rep.reconfigure_s += spec.elastic.reconfigure_s;
        elastic_factor = back.empty() ? 1.0 : spec.elastic.slowdown(out());
    }
    // A failure (cause >= 0) or a straggler's eviction (cause < 0: no detection left, its node
    // taken) now: back to the last durable checkpoint, then detection, any wait for a node,
    // restart and its load. The restart brings any replicas out (elastic) back with it.
    void fail(int cause) {
        const bool eviction = cause < 0;
        count(cause);
        back.clear();
        elastic_factor = 1;
        const bool lost = loses_local(cause);
        if (lost) lose_local();
        settle();
        pending.clear();  // still draining: lost with the job
        rep.lost_work_s += progress - durable;
        progress = durable;
        const double detect = eviction ? 0.0 : spec.detect_s;
        const double load = durable > 0 ? (lost ? spec.checkpoint.persist_load_s : spec.checkpoint.load_s) : 0.0;
        const double wait = wait_for_node(takes_node(cause), detect);
        rep.detect_s += detect;
        rep.node_wait_s += wait;
        rep.restart_s += spec.restart_s;
        rep.load_s += load;
        note(eviction ? RunEvent::Kind::Eviction : RunEvent::Kind::Failure, wall, 0, cause);
        if (detect > 0) note(RunEvent::Kind::Detect, wall, detect);
        if (wait > 0) note(RunEvent::Kind::NodeWait, wall + detect, wait);
        note(RunEvent::Kind::Restart, wall + detect + wait, spec.restart_s);
        if (load > 0) note(RunEvent::Kind::Load, wall + detect + wait + spec.restart_s, load);
        wall += detect + wait + spec.restart_s + load;
    }
};

// Which cause a failure had: cause i with probability rate_i / total_per_hour.
size_t draw_cause(const RunSpec& s, double total_per_hour, sim::RandomStream& r) {
    double u = r.uniform() * total_per_hour;
    for (size_t i = 0; i < s.failures.size(); ++i) {
        if (u < s.failures[i].per_hour) return i;
        u -= s.failures[i].per_hour;
    }
    return s.failures.size() - 1;
}

}  // namespace

std::string RunSpec::check() const {
    if (!(step_s > 0) || !std::isfinite(step_s)) return "step_s: must be a positive finite time";
    if (target_steps < 1) return "target_steps: must be >= 1";
    for (const FailureCause& c : failures)
        if (!finite_at_least(c.per_hour, 0)) return "failures." + c.name + ": a rate must be >= 0 and finite";
    const CheckpointPolicy& k = checkpoint;
    if (!finite_at_least(k.interval_s, 0)) return "checkpoint.interval: must be >= 0";
    if (!finite_at_least(k.stall_s, 0) || !finite_at_least(k.durable_s, 0) || !finite_at_least(k.load_s, 0))
        return "checkpoint: times must be >= 0 and finite";
    if (k.durable_s < k.stall_s) return "checkpoint: durable after the stall at the earliest";
    if (!finite_at_least(k.drain_slowdown, 1)) return "checkpoint.drain_slowdown: must be >= 1 and finite";
    if (k.persist_every < 0 || !finite_at_least(k.persist_s, 0) || !finite_at_least(k.persist_load_s, 0))
        return "checkpoint.persist: every N >= 0 checkpoints, times >= 0 and finite";
    if (!finite_at_least(detect_s, 0) || !finite_at_least(restart_s, 0)) return "restart: times must be >= 0";
    if (pool.spares >= 0 && !finite_at_least(pool.repair_s, 0)) return "pool.repair_s: must be >= 0 and finite";
    if (!(failure_shape >= 0.1 && failure_shape <= 10)) return "failure_shape: must be between 0.1 and 10";
    if (!finite_at_least(stragglers.per_hour, 0) || !finite_at_least(stragglers.detect_s, 0) ||
        !finite_at_least(stragglers.slowdown, 1))
        return "stragglers: a rate and a detection time >= 0, a slowdown >= 1, all finite";
    if (elastic.enabled &&
        (!finite_at_least(elastic.reconfigure_s, 0) || !finite_at_least(elastic.copy_s, 0) || !elastic.slowdown))
        return "elastic: a reconfiguration and a copy time >= 0 and finite, and the steps on fewer replicas";
    return "";
}

int64_t RunReport::failures() const {
    int64_t n = 0;
    for (int64_t x : interruptions) n += x;
    return n;
}

namespace {

// What ends a stretch of training first.
enum class Next { Reach, Failure, Onset, Eviction, Rejoin, DrainEnd };

// The draws of a run: failure gaps (exponential, or Weibull of the same mean) and straggler onsets,
// each from its own named stream, so a spec without stragglers draws exactly what it did before.
struct Clocks {
    sim::RandomStreams streams;
    sim::RandomStream &gaps, &causes, &slow;
    double lambda, shape, scale, sigma;
    double up = 0;         // up-time until the next failure, carried across checkpoints
    double to_slow = 0;    // training time until the next straggler appears
    double evict_at = -1;  // wall time the present straggler is evicted (< 0: none)

    Clocks(const RunSpec& spec, uint64_t seed)
        : streams(seed),
          gaps(streams.stream("run.failure")),
          causes(streams.stream("run.cause")),
          slow(streams.stream("run.straggler")),
          lambda(total_per_hour(spec) / 3600.0),
          shape(spec.failure_shape),
          scale(1.0 / lambda / std::tgamma(1.0 + 1.0 / shape)),
          sigma(spec.stragglers.per_hour / 3600.0) {
        up = next_gap();
        to_slow = next_onset();
    }
    // Weibull gaps of the same mean 1 / lambda: scale = mean / Gamma(1 + 1/k).
    double next_gap() {
        if (!(lambda > 0)) return kNever;
        return shape == 1 ? gaps.exponential(lambda) : gaps.weibull(shape, scale);
    }
    double next_onset() { return sigma > 0 ? slow.exponential(sigma) : kNever; }
};

// Training from now to `stop` (progress), unless a failure, a straggler's onset or its eviction, or
// replicas rejoining come first: the stretch's wall clock, its slow seconds' losses, and what ended it.
Next train(Run& run, Clocks& c, double stop) {
    const RunSpec& spec = run.spec;
    const bool slow = c.evict_at >= 0;
    const double straggling = slow ? spec.stragglers.slowdown : 1.0;
    const double drain_end = spec.checkpoint.drain_slowdown > 1 ? run.drain_end() : 0.0;
    const double draining = run.wall < drain_end ? spec.checkpoint.drain_slowdown : 1.0;
    const double factor = straggling * run.elastic_factor * draining;
    double dt = (stop - run.progress) * factor;
    Next next = Next::Reach;
    if (c.up < dt) dt = c.up, next = Next::Failure;
    if (!slow && c.to_slow < dt) dt = c.to_slow, next = Next::Onset;
    if (slow && c.evict_at - run.wall < dt) dt = std::max(0.0, c.evict_at - run.wall), next = Next::Eviction;
    if (!run.back.empty() && run.back.front() - run.wall < dt)
        dt = std::max(0.0, run.back.front() - run.wall), next = Next::Rejoin;
    if (draining > 1 && drain_end - run.wall < dt) dt = drain_end - run.wall, next = Next::DrainEnd;
    run.note(factor > 1 ? RunEvent::Kind::SlowTrain : RunEvent::Kind::Train, run.wall, dt);
    run.progress = next == Next::Reach ? stop : run.progress + dt / factor;
    run.wall += dt;
    c.up -= dt;
    if (!slow) c.to_slow -= dt;
    // Each slow second's loss, the straggler's part first, then the replicas', then the drain's:
    // 1 - 1/(s e d) = (1 - 1/s) + (1 - 1/e)/s + (1 - 1/d)/(s e).
    if (factor > 1) {
        run.rep.straggler_s += dt * (1 - 1 / straggling);
        run.rep.degraded_s += dt / straggling * (1 - 1 / run.elastic_factor);
        run.rep.drain_s += dt / (straggling * run.elastic_factor) * (1 - 1 / draining);
    }
    return next;
}

}  // namespace

RunReport simulate_run(const RunSpec& spec, uint64_t seed, std::vector<RunEvent>* log) {
    Clocks c(spec, seed);
    const double per_hour = total_per_hour(spec);
    const double target = static_cast<double>(spec.target_steps) * spec.step_s;
    const double tau = spec.checkpoint.interval_s > 0 ? spec.checkpoint.interval_s : kNever;
    Run run{spec, {}, 0, 0, 0, 0, {}, log, {}, {}, 1};
    run.rep.interruptions.assign(spec.failures.size(), 0);
    run.rep.productive_s = target;
    double next_checkpoint = tau;  // progress at which the next checkpoint starts
    const double stall = spec.checkpoint.stall_s;
    // A failure or an eviction: an elastic drop when the job can go on without the node (the
    // checkpoint schedule goes on), else a restart from the last durable checkpoint.
    auto restart = [&](int cause) {
        if (run.can_drop()) run.drop(cause);
        else {
            run.fail(cause);
            next_checkpoint = run.progress + tau;
        }
        if (cause >= 0) c.up = c.next_gap();
    };
    for (;;) {
        const bool slow = c.evict_at >= 0;
        if (spec.batch_cycles && !slow && run.back.empty() && next_checkpoint == run.progress + tau)
            run.pass_cycles(tau, target, c.up, c.to_slow, next_checkpoint);
        const Next next = train(run, c, std::min(next_checkpoint, target));
        if (next == Next::Failure) {
            restart(static_cast<int>(draw_cause(spec, per_hour, c.causes)));
            continue;
        }
        if (next == Next::Rejoin) {
            run.rejoin();
            continue;
        }
        if (next == Next::DrainEnd) continue;
        if (next == Next::Onset) {
            c.evict_at = run.wall + spec.stragglers.detect_s;
            continue;
        }
        if (next == Next::Eviction) {
            c.evict_at = -1;
            c.to_slow = c.next_onset();
            restart(-1);
            continue;
        }
        if (run.progress >= target) break;
        // A checkpoint of this progress: its stall, durable later.
        ++run.rep.checkpoints;
        run.settle();
        run.start_checkpoint(run.wall);
        const double stalled = std::min(c.up, stall);
        run.note(RunEvent::Kind::Checkpoint, run.wall, stalled);
        run.wall += stalled;
        run.rep.checkpoint_stall_s += stalled;
        if (c.up < stall) {  // fails during the stall: the checkpoint is not durable yet
            run.pending.pop_back();
            restart(static_cast<int>(draw_cause(spec, per_hour, c.causes)));
            next_checkpoint = run.progress + tau;
            continue;
        }
        c.up -= stall;
        next_checkpoint = run.progress + tau;
    }
    run.rep.wall_s = run.wall;
    run.rep.ettr = target / run.wall;
    return run.rep;
}

double expected_segment_s(double a, double lambda, double recovery_s) {
    if (lambda <= 0) return a;
    return (1.0 / lambda + recovery_s) * std::expm1(lambda * a);
}

double expected_sync_run_s(const RunSpec& spec) {
    const double lambda = total_per_hour(spec) / 3600.0;
    const CheckpointPolicy& k = spec.checkpoint;
    const double target = static_cast<double>(spec.target_steps) * spec.step_s;
    const double recovery = spec.detect_s + spec.restart_s + k.load_s;
    if (!(k.interval_s > 0)) return expected_segment_s(target, lambda, spec.detect_s + spec.restart_s);
    // Checkpoints at tau, 2 tau, ... below the target; the first segment restarts without a load.
    const double full = std::ceil(target / k.interval_s - 1e-12) - 1;
    const double rest = target - full * k.interval_s;
    if (full < 1) return expected_segment_s(target, lambda, spec.detect_s + spec.restart_s);
    return expected_segment_s(k.interval_s + k.stall_s, lambda, spec.detect_s + spec.restart_s) +
           (full - 1) * expected_segment_s(k.interval_s + k.stall_s, lambda, recovery) +
           expected_segment_s(rest, lambda, recovery);
}

double young_daly_interval_s(double write_s, double failures_per_s) {
    return std::sqrt(2.0 * write_s / failures_per_s);
}

}  // namespace fathom::workloads::run
