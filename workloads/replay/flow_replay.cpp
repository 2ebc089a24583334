#include "workloads/replay/flow_replay.h"

#include "sim/error.h"

#include <algorithm>
#include <limits>

namespace fathom::workloads {

size_t FlowReplay::index_of(sim::TaskGraph& graph) {
    for (size_t i = 0; i < graphs_.size(); ++i)
        if (graphs_[i].graph == &graph) return i;
    graphs_.push_back(Graph{&graph, {}, {}});
    graph.set_timer(this);
    return graphs_.size() - 1;
}

uint64_t FlowReplay::transfers() const {
    uint64_t n = direct_transfers_;
    for (const Graph& g : graphs_) n += g.transfers;
    return n;
}

uint64_t FlowReplay::transfers(const sim::TaskGraph& graph) const {
    for (const Graph& g : graphs_)
        if (g.graph == &graph) return g.transfers;
    return 0;
}

uint64_t FlowReplay::flows(const sim::TaskGraph& graph) const {
    for (const Graph& g : graphs_)
        if (g.graph == &graph) return g.flows;
    return 0;
}

void FlowReplay::route(sim::TaskGraph& graph, sim::StreamId stream, int pattern, double reference_s) {
    graphs_[index_of(graph)].streams[stream] = Route{pattern, reference_s};
}

void FlowReplay::route_task(sim::TaskGraph& graph, sim::TaskId task, int pattern, double reference_s) {
    graphs_[index_of(graph)].tasks[task] = Route{pattern, reference_s};
}

bool FlowReplay::take(sim::TaskGraph& graph, const sim::TaskRecord& task, sim::Time duration) {
    const size_t g = index_of(graph);
    const Graph& gr = graphs_[g];  // (a reference: start() below does not add graphs)
    const Route* r = nullptr;
    if (auto it = gr.tasks.find(task.id); it != gr.tasks.end()) r = &it->second;
    else if (auto st = gr.streams.find(task.stream); st != gr.streams.end()) r = &st->second;
    if (!r || r->pattern < 0) return false;
    const double fixed = session_.fixed_seconds(r->pattern);
    const double d = duration.seconds();
    if (d <= fixed || r->reference_s <= fixed) return false;  // latency only: nothing to share
    if (session_.isolated(r->pattern)) return false;          // its links are its own: as priced
    catch_up();
    const uint64_t tag = (static_cast<uint64_t>(g) << 32) | task.id;
    graphs_[g].flows += session_.start(r->pattern, (d - fixed) / (r->reference_s - fixed), tag);
    fixed_of_[tag] = fixed;
    ++graphs_[g].transfers;
    return true;
}

void FlowReplay::catch_up() {
    // The session's clock follows the engine's: it lags while nothing flows, or by rounding (SimGrid
    // may stop a hair before the engine's time); transfers ending in that gap end now.
    while (session_.now() < sim_.now().seconds()) {
        std::vector<uint64_t> done;
        session_.advance(sim_.now().seconds(), done);
        if (done.empty()) break;
        ended(done);
    }
}

void FlowReplay::start(int pattern, double scale, double fixed, sim::Simulator::Handler on_end) {
    catch_up();
    const uint64_t tag = direct_next_++;
    direct_.emplace(tag, std::make_pair(fixed, std::move(on_end)));
    ++direct_transfers_;
    session_.start(pattern, scale, tag);
}

void FlowReplay::ended(const std::vector<uint64_t>& tags) {
    for (uint64_t tag : tags) {
        if (tag >= kDirect) {
            auto it = direct_.find(tag);
            FATHOM_CHECK(it != direct_.end(), "flow replay: an unknown transfer ended");
            sim_.schedule_after(sim::Time::from_seconds(it->second.first), std::move(it->second.second));
            direct_.erase(it);
            continue;
        }
        const auto it = fixed_of_.find(tag);
        FATHOM_CHECK(it != fixed_of_.end(), "flow replay: an unknown transfer ended");
        const double fixed = it->second;
        fixed_of_.erase(it);
        sim::TaskGraph* graph = graphs_[static_cast<size_t>(tag >> 32)].graph;
        const auto task = static_cast<sim::TaskId>(tag & 0xffffffffu);
        sim_.schedule_after(sim::Time::from_seconds(fixed), [graph, task] { graph->complete(task); });
    }
}

void FlowReplay::run() {
    std::vector<uint64_t> done;
    for (;;) {
        const sim::Time next = sim_.next_event_time();
        if (!fixed_of_.empty() || !direct_.empty()) {
            // Flows run until the engine's next event or until one of them ends, if sooner.
            const double until = next == sim::Time::max() ? std::numeric_limits<double>::infinity() : next.seconds();
            const double t = session_.advance(until, done);
            FATHOM_CHECK(!done.empty() || next != sim::Time::max(), "flow replay: transfers running but none can end");
            if (!done.empty()) {
                // An end within the picosecond of `next` rounds onto it: its completion still comes
                // after the events already at that time (it is scheduled later).
                const sim::Time at = std::min(next, std::max(sim_.now(), sim::Time::from_seconds(t)));
                sim_.run_until(at);
                ended(done);
                continue;
            }
        }
        if (next == sim::Time::max()) return;
        sim_.run_until(next);
    }
}

}  // namespace fathom::workloads
