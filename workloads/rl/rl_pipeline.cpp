#include "workloads/rl/rl_pipeline.h"

#include <algorithm>

namespace fathom::workloads::rl {
namespace {

void summarise(PipelineResult& out, double rollout_busy, double trainer_busy) {
    const size_t n = out.spans.size();
    out.total_s = out.spans.back().sync_end;
    // The steady state: the gaps between updates' ends over the second half of the iterations
    // (the first ones fill the pipeline).
    const size_t from = n / 2 > 0 ? n / 2 - 1 : 0;
    out.iteration_s = n > 1 ? (out.spans.back().sync_end - out.spans[from].sync_end) / static_cast<double>(n - 1 - from)
                            : out.total_s;
    out.rollout_busy = out.total_s > 0 ? rollout_busy / out.total_s : 0;
    out.trainer_busy = out.total_s > 0 ? trainer_busy / out.total_s : 0;
    double sum = 0;
    for (const IterationSpan& s : out.spans) {
        if (out.staleness_counts.size() <= static_cast<size_t>(s.staleness))
            out.staleness_counts.resize(static_cast<size_t>(s.staleness) + 1, 0);
        ++out.staleness_counts[static_cast<size_t>(s.staleness)];
        sum += s.staleness;
    }
    out.mean_staleness = sum / static_cast<double>(n);
}

}  // namespace

PipelineResult run_pipeline(const std::vector<PhaseTimes>& it, Layout layout, int staleness) {
    PipelineResult out;
    const size_t n = it.size();
    if (n == 0) return out;
    out.spans.resize(n);
    double rollout_busy = 0, trainer_busy = 0;
    if (layout == Layout::Colocated || staleness == 0) {
        // Turns: rollout (colocated: then the host copies), forward and update, sync.
        double t = 0;
        for (size_t i = 0; i < n; ++i) {
            IterationSpan& s = out.spans[i];
            s.version = static_cast<int>(i);
            s.rollout_start = t;
            s.rollout_end = t + it[i].rollout_s;
            const double offload = layout == Layout::Colocated ? it[i].offload_s : 0;
            s.load_start = s.load_end = s.rollout_end;
            s.train_start = s.rollout_end + offload;
            s.train_end = s.train_start + it[i].forward_s + it[i].update_s;
            s.sync_start = s.train_end;
            s.sync_end = s.train_end + it[i].sync_s;
            t = s.sync_end;
            rollout_busy += it[i].rollout_s + it[i].sync_s;
            trainer_busy += it[i].forward_s + it[i].update_s + it[i].sync_s + offload;
        }
        summarise(out, rollout_busy, trainer_busy);
        return out;
    }
    // Asynchronous: published[v] is when version v reached the trainer's outbox (version 0 at 0).
    std::vector<double> published(n + 1, 0.0);
    double rollout_free = 0, trainer_free = 0;
    int loaded = 0;
    for (size_t i = 0; i < n; ++i) {
        IterationSpan& s = out.spans[i];
        // Version i - k must be published; the updates before batch i are done by then or not.
        const int need = std::max(0, static_cast<int>(i) - staleness);
        double start = std::max(rollout_free, published[static_cast<size_t>(need)]);
        // The newest version published by then.
        int newest = need;
        while (newest < static_cast<int>(i) && published[static_cast<size_t>(newest) + 1] <= start) ++newest;
        s.load_start = s.load_end = start;
        if (newest > loaded) {
            s.load_end = start + it[i].sync_s;
            rollout_busy += it[i].sync_s;
            loaded = newest;
        }
        s.version = loaded;
        s.staleness = static_cast<int>(i) - loaded;
        s.rollout_start = s.load_end;
        s.rollout_end = s.rollout_start + it[i].rollout_s;
        rollout_free = s.rollout_end;
        rollout_busy += it[i].rollout_s;
        // The trainer: update i once batch i is in, then its weight push.
        s.train_start = std::max(trainer_free, s.rollout_end);
        s.train_end = s.train_start + it[i].forward_s + it[i].update_s;
        s.sync_start = s.train_end;
        s.sync_end = s.train_end + it[i].sync_s;
        trainer_free = s.sync_end;
        trainer_busy += it[i].forward_s + it[i].update_s + it[i].sync_s;
        published[i + 1] = s.sync_end;
    }
    summarise(out, rollout_busy, trainer_busy);
    return out;
}

}  // namespace fathom::workloads::rl
