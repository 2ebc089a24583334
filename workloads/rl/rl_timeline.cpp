#include "workloads/rl/rl_timeline.h"

#include "sim/trace_writer.h"

namespace fathom::workloads::rl {

void write_timeline(const RlReport& r, Layout layout, std::ostream& out) {
    sim::TraceWriter w(out);
    const bool one = layout == Layout::Colocated;
    w.process_name(0, one ? "GPUs (colocated)" : "rollout pool");
    if (!one) w.process_name(1, "trainer pool");
    w.thread_name(0, 0, "phases");
    if (!one) w.thread_name(1, 0, "phases");
    const int trainer = one ? 0 : 1;
    for (size_t i = 0; i < r.pipeline.spans.size(); ++i) {
        const auto& s = r.pipeline.spans[i];
        const auto it = static_cast<int64_t>(i);
        if (s.load_end > s.load_start)
            w.complete_seconds(0, 0, "weight load", s.load_start, s.load_end - s.load_start, {{"iteration", it}});
        w.complete_seconds(0, 0, "rollout", s.rollout_start, s.rollout_end - s.rollout_start,
                           {{"iteration", it}, {"version", s.version}});
        if (one && r.phases[i].offload_s > 0)
            w.complete_seconds(0, 0, "offload/reload", s.rollout_end, r.phases[i].offload_s, {{"iteration", it}});
        const double fwd = r.phases[i].forward_s;
        if (fwd > 0) w.complete_seconds(trainer, 0, "forward passes", s.train_start, fwd, {{"iteration", it}});
        w.complete_seconds(trainer, 0, "update", s.train_start + fwd, s.train_end - s.train_start - fwd,
                           {{"iteration", it}});
        if (s.sync_end > s.sync_start)
            w.complete_seconds(trainer, 0, "weight sync", s.sync_start, s.sync_end - s.sync_start, {{"iteration", it}});
    }
    w.close();
}

}  // namespace fathom::workloads::rl
