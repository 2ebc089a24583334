// The flow network's timer of communication tasks (transfer_timer.h): every carried task starts an
// instance of its communicator's pattern on one flow session, fathom's clock the master.
//
// A task planned at D seconds on a communicator whose reference call (kReferenceBytes of its shape)
// is priced R with a fixed part F (launch, latencies) moves the pattern's flows scaled by
// (D - F) / (R - F), so that alone it would take D; it ends when its last flow ends, plus F. A task
// no longer than F moves nothing and keeps D, and so does a task whose pattern shares no link with
// any other (a TP group inside its node, where no other traffic goes): alone is all it can be. Tasks
// not carried (compute) keep their durations.
//
// The run loop: before the engine runs the events of its next time, the flows advance to that time
// (FlowSession::advance stops early at an instance's end, which schedules the task's completion).
#include "hardware/network/simgrid_network.h"
#include "hardware/network/transfer_timer.h"
#include "sim/error.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace fathom::hardware {
namespace {

class FlowTimer final : public TransferTimer {
public:
    FlowTimer(sim::Simulator& sim, std::unique_ptr<FlowSession> session) : sim_(sim), session_(std::move(session)) {}

    bool times_tasks() const override { return true; }
    int add_communicator(const Communicator& c) override {
        std::vector<CollectiveCall> calls;
        for (const CommGroup& g : c.groups()) calls.push_back({c.shape, kReferenceBytes, g, 0.0});
        routes_.push_back(Route{session_->add_pattern(calls), c.reference_s ? c.reference_s() : 0.0});
        return static_cast<int>(routes_.size()) - 1;
    }
    void carry(sim::TaskGraph& graph, sim::TaskId task, const Transfer&, int communicator) override {
        Graph& g = graphs_[index_of(graph)];
        if (g.route.size() <= task) g.route.resize(static_cast<size_t>(task) + 1, -1);
        g.route[task] = communicator;
    }
    bool take(sim::TaskGraph& graph, const sim::TaskRecord& task, sim::Time duration) override;
    void start(const Transfer& transfer, int communicator, sim::Simulator::Handler done) override {
        catch_up();
        const int pattern = routes_.at(static_cast<size_t>(communicator)).pattern;
        const uint64_t tag = direct_next_++;
        direct_.emplace(tag, std::make_pair(session_->fixed_seconds(pattern), std::move(done)));
        ++direct_transfers_;
        session_->start(pattern, transfer.bytes / kReferenceBytes, tag);
    }
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
    struct Route {
        int pattern = -1;
        double reference_s = 0;
    };
    struct Graph {
        sim::TaskGraph* graph = nullptr;
        std::vector<int> route;  // per task: its communicator, -1 when not carried
        uint64_t transfers = 0, flows = 0;
    };
    size_t index_of(sim::TaskGraph& graph) {
        for (size_t i = 0; i < graphs_.size(); ++i)
            if (graphs_[i].graph == &graph) return i;
        graphs_.push_back(Graph{&graph, {}, 0, 0});
        graph.set_timer(this);
        return graphs_.size() - 1;
    }
    const Graph* find(const sim::TaskGraph& graph) const {
        for (const Graph& g : graphs_)
            if (g.graph == &graph) return &g;
        return nullptr;
    }
    // Completions of instances that ended at the session's time: their tasks complete after their
    // fixed part.
    void ended(const std::vector<uint64_t>& tags);
    // Brings the session's clock to the engine's (it lags while nothing flows).
    void catch_up();

    sim::Simulator& sim_;
    std::unique_ptr<FlowSession> session_;
    std::vector<Route> routes_;  // per communicator
    std::vector<Graph> graphs_;
    std::unordered_map<uint64_t, double> fixed_of_;  // running instance (graph << 32 | task) -> its fixed part
    // start() transfers, tagged from kDirect up: fixed part and completion.
    static constexpr uint64_t kDirect = uint64_t{1} << 63;
    std::unordered_map<uint64_t, std::pair<double, sim::Simulator::Handler>> direct_;
    uint64_t direct_next_ = kDirect, direct_transfers_ = 0;
};

bool FlowTimer::take(sim::TaskGraph& graph, const sim::TaskRecord& task, sim::Time duration) {
    const size_t g = index_of(graph);
    const std::vector<int>& route = graphs_[g].route;
    if (task.id >= route.size() || route[task.id] < 0) return false;
    const Route& r = routes_[static_cast<size_t>(route[task.id])];
    const double fixed = session_->fixed_seconds(r.pattern);
    const double d = duration.seconds();
    if (d <= fixed || r.reference_s <= fixed) return false;  // latency only: nothing to share
    if (session_->isolated(r.pattern)) return false;         // its links are its own: as planned
    catch_up();
    const uint64_t tag = (static_cast<uint64_t>(g) << 32) | task.id;
    graphs_[g].flows += session_->start(r.pattern, (d - fixed) / (r.reference_s - fixed), tag);
    fixed_of_[tag] = fixed;
    ++graphs_[g].transfers;
    return true;
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
        const auto it = fixed_of_.find(tag);
        FATHOM_CHECK(it != fixed_of_.end(), "flow timer: an unknown transfer ended");
        const double fixed = it->second;
        fixed_of_.erase(it);
        sim::TaskGraph* graph = graphs_[static_cast<size_t>(tag >> 32)].graph;
        const auto task = static_cast<sim::TaskId>(tag & 0xffffffffu);
        sim_.schedule_after(sim::Time::from_seconds(fixed), [graph, task] { graph->complete(task); });
    }
}

void FlowTimer::run() {
    std::vector<uint64_t> done;
    for (;;) {
        const sim::Time next = sim_.next_event_time();
        if (!fixed_of_.empty() || !direct_.empty()) {
            // Flows run until the engine's next event or until one of them ends, if sooner.
            const double until = next == sim::Time::max() ? std::numeric_limits<double>::infinity() : next.seconds();
            const double t = session_->advance(until, done);
            FATHOM_CHECK(!done.empty() || next != sim::Time::max(), "flow timer: transfers running but none can end");
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

}  // namespace

std::unique_ptr<TransferTimer> make_flow_timer(sim::Simulator& sim, std::unique_ptr<FlowSession> session) {
    return std::make_unique<FlowTimer>(sim, std::move(session));
}

}  // namespace fathom::hardware
