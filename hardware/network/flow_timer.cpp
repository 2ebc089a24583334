// The flow network's timer of communication tasks (transfer_timer.h): a carried task runs the flows
// of its own transfers on one flow session, fathom's clock the master; its planned duration is not
// used.
//
// A transfer {collective, bytes, group} on a communicator runs as the network would run it: the
// algorithm NetworkModel::plan() picks for that call, whose flows (those of every group of the
// communicator) are routed once per (communicator, collective, algorithm), at the bytes of the
// first such transfer, and scaled by bytes for the others (an algorithm's flows are linear in its
// bytes); it takes the time until its last flow ends plus the plan's fixed part (launch, latencies,
// pipeline fill). A part `share` of a transfer moves that share of its bytes and of its fixed part.
// A task's transfers run one after another, each `count` times, and the task ends with the last.
//
// A transfer whose flows share no link with another communicator's (a TP group inside its node,
// where no other traffic goes) runs alone whatever else is in flight: it takes its flows' time
// alone (FlowSession::alone_seconds, scaled) without entering the session. Tasks not carried
// (compute) keep their durations.
//
// The run loop: before the engine runs the events of its next time, the flows advance to that time
// (FlowSession::advance stops early at an instance's end, which schedules what follows it).
#include "hardware/network/simgrid_network.h"
#include "hardware/network/transfer_timer.h"
#include "sim/error.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

namespace fathom::hardware {
namespace {

class FlowTimer final : public TransferTimer {
public:
    FlowTimer(sim::Simulator& sim, const NetworkModel& network, std::unique_ptr<FlowSession> session)
        : sim_(sim), network_(network), session_(std::move(session)) {}

    bool times_tasks() const override { return true; }
    int add_communicator(const Communicator& c) override {
        const int id = static_cast<int>(groups_.size());
        groups_.push_back(c.groups());
        FATHOM_CHECK(!groups_.back().empty(), "flow timer: a communicator without groups");
        if (c.outside) resolve(Transfer{*c.outside, kReferenceBytes, groups_.back().front()}, id);
        return id;
    }
    void carry(sim::TaskGraph& graph, sim::TaskId task, const std::vector<TransferPart>& parts) override;
    bool take(sim::TaskGraph& graph, const sim::TaskRecord& task, sim::Time duration) override;
    void start(const Transfer& transfer, int communicator, sim::Simulator::Handler done) override;
    void run() override;
    uint64_t flow_transfers(const sim::TaskGraph& graph) const override {
        const Graph* g = find(graph);
        return g ? g->transfers : 0;
    }
    uint64_t flows(const sim::TaskGraph& graph) const override {
        const Graph* g = find(graph);
        return g ? g->flows : 0;
    }
    uint64_t flow_transfers() const override {
        uint64_t n = direct_transfers_;
        for (const Graph& g : graphs_) n += g.transfers;
        return n;
    }

private:
    // A transfer as it runs: its pattern (-1: no flows), the scale of the pattern's bytes and its
    // fixed part.
    struct Resolved {
        int pattern = -1;
        double scale = 0;
        double fixed = 0;
    };
    // A part of a carried task: a Resolved with the share applied, `count` times.
    struct Part {
        Resolved run;
        int count = 1;
    };
    struct Graph {
        sim::TaskGraph* graph = nullptr;
        std::vector<std::pair<uint32_t, uint32_t>> span;  // per task: its parts [first, last)
        std::vector<Part> parts;
        uint64_t transfers = 0, flows = 0;
    };
    // A task that runs: its graph and the part and repeat it is at.
    struct Running {
        uint32_t graph = 0;
        sim::TaskId task = 0;
        uint32_t part = 0;
        int repeat = 0;
    };

    size_t index_of(sim::TaskGraph& graph) {
        if (last_ < graphs_.size() && graphs_[last_].graph == &graph) return last_;
        for (size_t i = 0; i < graphs_.size(); ++i)
            if (graphs_[i].graph == &graph) return last_ = i;
        graphs_.push_back(Graph{&graph, {}, {}, 0, 0});
        graph.set_timer(this);
        return last_ = graphs_.size() - 1;
    }
    const Graph* find(const sim::TaskGraph& graph) const {
        for (const Graph& g : graphs_)
            if (g.graph == &graph) return &g;
        return nullptr;
    }
    // The pattern, scale and fixed part of `transfer` on `communicator` (routing it if new).
    const Resolved& resolve(const Transfer& transfer, int communicator);
    // Runs a task on from where it is: parts alone in their time, a contended part as flows; at the
    // end of its parts the task completes (at once when `now`: not from inside the graph's take()).
    void proceed(uint64_t id, bool now = true);
    double alone(const Resolved& r) const {
        return r.fixed + (r.pattern < 0 ? 0.0 : r.scale * session_->alone_seconds(r.pattern));
    }
    // Instances that ended at the session's time: what follows each comes after its fixed part.
    void ended(const std::vector<uint64_t>& tags);
    // Brings the session's clock to the engine's (it lags while nothing flows).
    void catch_up();

    sim::Simulator& sim_;
    const NetworkModel& network_;
    std::unique_ptr<FlowSession> session_;
    std::vector<std::vector<CommGroup>> groups_;  // per communicator
    // Routes per (communicator, collective, algorithm): the pattern and the bytes it was routed at.
    std::map<std::tuple<int, int, std::string>, std::pair<int, double>> routes_;
    std::map<std::tuple<int, int, double>, Resolved> resolved_;  // per (communicator, collective, bytes)
    std::vector<Graph> graphs_;
    size_t last_ = 0;                                // the graph index_of() found last
    std::unordered_map<uint64_t, Running> running_;  // tasks that run, by id
    uint64_t next_id_ = 0, in_flight_ = 0;           // instances of running tasks in the session
    // start() transfers, tagged from kDirect up: fixed part and completion.
    static constexpr uint64_t kDirect = uint64_t{1} << 63;
    std::unordered_map<uint64_t, std::pair<double, sim::Simulator::Handler>> direct_;
    uint64_t direct_next_ = kDirect, direct_transfers_ = 0;
};

const FlowTimer::Resolved& FlowTimer::resolve(const Transfer& t, int communicator) {
    FATHOM_CHECK(communicator >= 0 && static_cast<size_t>(communicator) < groups_.size(),
                 "flow timer: unknown communicator " + std::to_string(communicator));
    const auto key = std::make_tuple(communicator, static_cast<int>(t.collective), t.bytes);
    if (auto it = resolved_.find(key); it != resolved_.end()) return it->second;
    Resolved r;
    if (t.group.count() > 1 && t.bytes > 0) {
        const CollectivePlan plan = network_.plan(t.collective, t.bytes, t.group);
        r.fixed = plan.fixed_seconds;
        auto [route, fresh] = routes_.emplace(
            std::make_tuple(communicator, static_cast<int>(t.collective), plan.algorithm), std::make_pair(-1, t.bytes));
        if (fresh) {
            std::vector<CollectiveCall> calls;
            for (const CommGroup& g : groups_[static_cast<size_t>(communicator)])
                calls.push_back({t.collective, t.bytes, g, 0.0});
            route->second.first = session_->add_pattern(calls, communicator);
        }
        r.pattern = route->second.first;
        r.scale = t.bytes / route->second.second;
    }
    return resolved_.emplace(key, r).first->second;
}

void FlowTimer::carry(sim::TaskGraph& graph, sim::TaskId task, const std::vector<TransferPart>& parts) {
    Graph& g = graphs_[index_of(graph)];
    if (g.span.size() <= task) g.span.resize(static_cast<size_t>(task) + 1, {0, 0});
    const auto first = static_cast<uint32_t>(g.parts.size());
    for (const TransferPart& p : parts) {
        if (p.count <= 0 || !(p.share > 0)) continue;
        Resolved r = resolve(p.transfer, p.communicator);
        r.scale *= p.share;
        r.fixed *= p.share;
        g.parts.push_back(Part{r, p.count});
    }
    g.span[task] = {first, static_cast<uint32_t>(g.parts.size())};
}

bool FlowTimer::take(sim::TaskGraph& graph, const sim::TaskRecord& task, sim::Time) {
    const size_t g = index_of(graph);
    const auto& span = graphs_[g].span;
    if (task.id >= span.size() || span[task.id].first == span[task.id].second) return false;
    const uint64_t id = next_id_++;
    running_.emplace(id, Running{static_cast<uint32_t>(g), task.id, 0, 0});
    proceed(id, false);
    return true;
}

void FlowTimer::proceed(uint64_t id, bool now) {
    Running& r = running_.at(id);
    Graph& g = graphs_[r.graph];
    const auto [first, last] = g.span[r.task];
    double delay = 0;  // parts alone run back to back: one wait for all of them
    for (; first + r.part < last; ++r.part, r.repeat = 0) {
        const Part& p = g.parts[first + r.part];
        if (p.run.pattern >= 0 && !session_->isolated(p.run.pattern)) {
            if (delay > 0) {
                sim_.schedule_after(sim::Time::from_seconds(delay), [this, id] { proceed(id); });
                return;
            }
            catch_up();
            g.flows += session_->start(p.run.pattern, p.run.scale, id);
            ++g.transfers;
            ++in_flight_;
            return;
        }
        delay += (p.count - r.repeat) * alone(p.run);
    }
    sim::TaskGraph* graph = g.graph;
    const sim::TaskId task = r.task;
    running_.erase(id);
    if (now && delay == 0) graph->complete(task);
    else sim_.schedule_after(sim::Time::from_seconds(delay), [graph, task] { graph->complete(task); });
}

void FlowTimer::start(const Transfer& transfer, int communicator, sim::Simulator::Handler done) {
    const Resolved r = resolve(transfer, communicator);
    catch_up();
    ++direct_transfers_;
    if (r.pattern < 0) {
        sim_.schedule_after(sim::Time::from_seconds(r.fixed), std::move(done));
        return;
    }
    const uint64_t tag = direct_next_++;
    direct_.emplace(tag, std::make_pair(r.fixed, std::move(done)));
    session_->start(r.pattern, r.scale, tag);
}

void FlowTimer::catch_up() {
    // The session's clock follows the engine's: it lags while nothing flows, or by rounding (SimGrid
    // may stop a hair before the engine's time); transfers ending in that gap end now.
    while (session_->now() < sim_.now().seconds()) {
        std::vector<uint64_t> done;
        session_->advance(sim_.now().seconds(), done);
        if (done.empty()) break;
        ended(done);
    }
}

void FlowTimer::ended(const std::vector<uint64_t>& tags) {
    for (uint64_t tag : tags) {
        if (tag >= kDirect) {
            auto it = direct_.find(tag);
            FATHOM_CHECK(it != direct_.end(), "flow timer: an unknown transfer ended");
            sim_.schedule_after(sim::Time::from_seconds(it->second.first), std::move(it->second.second));
            direct_.erase(it);
            continue;
        }
        const auto it = running_.find(tag);
        FATHOM_CHECK(it != running_.end(), "flow timer: an unknown transfer ended");
        --in_flight_;
        Running& r = it->second;
        const Graph& g = graphs_[r.graph];
        const Part& p = g.parts[g.span[r.task].first + r.part];
        if (++r.repeat == p.count) {
            ++r.part;
            r.repeat = 0;
        }
        sim_.schedule_after(sim::Time::from_seconds(p.run.fixed), [this, tag] { proceed(tag); });
    }
}

void FlowTimer::run() {
    std::vector<uint64_t> done;
    for (;;) {
        const sim::Time next = sim_.next_event_time();
        if (in_flight_ > 0 || !direct_.empty()) {
            // Flows run until the engine's next event or until one of them ends, if sooner.
            const double until = next == sim::Time::max() ? std::numeric_limits<double>::infinity() : next.seconds();
            const double t = session_->advance(until, done);
            FATHOM_CHECK(!done.empty() || next != sim::Time::max(), "flow timer: transfers running but none can end");
            if (!done.empty()) {
                // An end within the picosecond of `next` rounds onto it: what follows it still comes
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

}  // namespace

std::unique_ptr<TransferTimer> make_flow_timer(sim::Simulator& sim, const NetworkModel& network,
                                               std::unique_ptr<FlowSession> session) {
    return std::make_unique<FlowTimer>(sim, network, std::move(session));
}

}  // namespace fathom::hardware
