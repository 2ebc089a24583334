// A flow solver in front of another that keeps lone groups of flows out of it (flow_solver.h).
//
// Flows started at the same time are split into groups joined by shared links. A group whose links
// no other flow is using is lone: its flows share those links max-min among themselves, computed
// here as SimGrid's maxmin does it (every link whose capacity per unset flow is the least saturates
// at once; when a flow ends, the flows joined to it through links are brought to that date and
// shared again, the others keep their rates), until another flow comes onto one of its links. A
// flow that starts on a busy link first brings every lone group on its links into the solver, each
// flow with the bytes it has left, then joins them there. Most transfers of a step run alone (a
// pipeline send while no other traffic crosses its NICs), so the solver sees only the flows that
// contend, and a few more.
#include "hardware/network/flow_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <unordered_map>

namespace fathom::hardware {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

class LoneFlows final : public FlowSolver {
public:
    explicit LoneFlows(std::unique_ptr<FlowSolver> inner) : inner_(std::move(inner)) {}

    int add_link(double capacity) override {
        users_.push_back(0);
        lone_on_.push_back(kNone);
        mark_.push_back(kNone);
        capacity_.push_back(capacity);
        return inner_->add_link(capacity);
    }
    int add_path(const std::vector<int>& links) override {
        paths_.push_back(links);
        return inner_->add_path(links);
    }
    void start(int path, double bytes, uint64_t tag) override { pending_.push_back({tag, path, bytes}); }
    double advance(double until, std::vector<uint64_t>& done) override;
    double now() const override { return now_; }

private:
    struct Start {
        uint64_t tag;
        int path;
        double bytes;
    };
    struct Flow {
        uint64_t tag;
        int path;
        double left;  // bytes at `last`
        double rate;
        double end;
        double last;
        uint32_t first, count;  // its links: at_[first, first + count), indices into the group's links
        bool running;
    };
    struct Group {
        std::vector<Flow> flows;
        std::vector<int> links;    // every link of its flows, once
        std::vector<uint32_t> at;  // the flows' links, as indices into `links`
        size_t running = 0;
        uint32_t version = 0;  // of its entry in `ends_`
    };
    struct End {
        double at;
        uint32_t group, version;
        bool operator>(const End& o) const { return at > o.at || (at == o.at && group > o.group); }
    };

    void place_pending();
    void place(const Start* starts, size_t n);
    void share(uint32_t group);
    void begin_inner(int path, double bytes, uint64_t tag);
    void end_lone(double at, std::vector<uint64_t>& done);
    void end_flows(uint32_t id, double at, std::vector<uint64_t>& done);
    void fill_rates(Group& g, const std::vector<char>& which);
    void schedule(uint32_t id);
    void release(int path) {
        for (int l : paths_[static_cast<size_t>(path)]) --users_[static_cast<size_t>(l)];
    }
    static bool crosses(const Group& g, const Flow& f, const std::vector<char>& on) {
        for (uint32_t k = f.first; k < f.first + f.count; ++k)
            if (on[g.at[k]]) return true;
        return false;
    }

    std::unique_ptr<FlowSolver> inner_;
    std::vector<double> capacity_;
    std::vector<std::vector<int>> paths_;
    std::vector<int> users_;                  // per link: flows on it, lone or not
    std::vector<uint32_t> lone_on_;           // per link: the lone group on it, if any
    std::vector<uint32_t> mark_;              // per link, scratch: kNone outside place_pending and place
    std::vector<Group> groups_;               // lone groups (ended or shared ones emptied)
    std::unordered_map<uint64_t, int> real_;  // flows in the solver: tag -> path
    std::vector<Start> pending_;              // started since the last advance
    std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
    double now_ = 0;
};

double LoneFlows::advance(double until, std::vector<uint64_t>& done) {
    done.clear();
    place_pending();
    while (!ends_.empty() && ends_.top().version != groups_[ends_.top().group].version) ends_.pop();
    const double next_lone = ends_.empty() ? std::numeric_limits<double>::infinity() : ends_.top().at;
    const double to = std::min(until, next_lone);
    if (!real_.empty()) {
        const double t = inner_->advance(to, done);
        for (uint64_t tag : done) {
            const auto it = real_.find(tag);
            release(it->second);
            real_.erase(it);
        }
        // Flows in the solver ended first, or it reached `until` (or stopped a hair before);
        // lone flows ending at the same date as solver ones are reported with them.
        if ((!done.empty() && t < next_lone) || next_lone > to) return now_ = std::max(now_, t);
    } else if (next_lone > until) {
        if (std::isfinite(until)) now_ = std::max(now_, until);
        return now_;
    }
    now_ = std::max(now_, next_lone);
    end_lone(next_lone, done);
    return now_;
}

void LoneFlows::end_lone(double at, std::vector<uint64_t>& done) {
    while (!ends_.empty() && ends_.top().at <= at) {
        const End e = ends_.top();
        ends_.pop();
        if (e.version == groups_[e.group].version) end_flows(e.group, at, done);
    }
}

// The flows of a lone group that end at `at`; the flows joined to them through links (the part of
// the group the solver would update) share the freed capacity from then on.
void LoneFlows::end_flows(uint32_t id, double at, std::vector<uint64_t>& done) {
    Group& g = groups_[id];
    std::vector<char> hit(g.links.size(), 0), used(g.links.size(), 0), joined(g.flows.size(), 0);
    for (Flow& f : g.flows) {
        if (!f.running) continue;
        if (f.end > at) {
            for (uint32_t k = f.first; k < f.first + f.count; ++k) used[g.at[k]] = 1;
            continue;
        }
        f.running = false;
        --g.running;
        release(f.path);
        done.push_back(f.tag);
        for (uint32_t k = f.first; k < f.first + f.count; ++k) hit[g.at[k]] = 1;
    }
    for (uint32_t k = 0; k < g.links.size(); ++k)  // links the group no longer uses are free
        if (!used[k] && lone_on_[static_cast<size_t>(g.links[k])] == id)
            lone_on_[static_cast<size_t>(g.links[k])] = kNone;
    if (g.running == 0) {
        ++g.version;
        g = Group{{}, {}, {}, 0, g.version};
        return;
    }
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < g.flows.size(); ++i) {
            Flow& f = g.flows[i];
            if (!f.running || joined[i] || !crosses(g, f, hit)) continue;
            joined[i] = 1;
            grew = true;
            for (uint32_t k = f.first; k < f.first + f.count; ++k) hit[g.at[k]] = 1;
            f.left -= f.rate * (at - f.last);
            f.last = at;
        }
    }
    fill_rates(g, joined);
    schedule(id);
}

// Splits the flows started since the last advance into groups joined by shared links.
void LoneFlows::place_pending() {
    if (pending_.empty()) return;
    std::vector<Start> starts;
    starts.swap(pending_);
    std::vector<uint32_t> parent(starts.size());
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&parent](uint32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    };
    for (uint32_t i = 0; i < starts.size(); ++i)
        for (int l : paths_[static_cast<size_t>(starts[i].path)]) {
            uint32_t& first = mark_[static_cast<size_t>(l)];
            if (first == kNone) first = i;
            else parent[find(i)] = find(first);
        }
    for (const Start& s : starts)
        for (int l : paths_[static_cast<size_t>(s.path)]) mark_[static_cast<size_t>(l)] = kNone;
    // The groups in order of their first flow, each in start order.
    std::vector<uint32_t> order(starts.size());
    std::iota(order.begin(), order.end(), 0u);
    for (uint32_t i = 0; i < starts.size(); ++i) parent[i] = find(i);
    std::stable_sort(order.begin(), order.end(), [&parent](uint32_t a, uint32_t b) { return parent[a] < parent[b]; });
    std::vector<Start> group;
    for (size_t i = 0; i < order.size(); ++i) {
        group.push_back(starts[order[i]]);
        if (i + 1 == order.size() || parent[order[i + 1]] != parent[order[i]]) {
            place(group.data(), group.size());
            group.clear();
        }
    }
}

// A group on idle links runs lone; any other joins the solver, with the lone groups on its links.
void LoneFlows::place(const Start* starts, size_t n) {
    Group g;
    bool lone = true;
    for (size_t i = 0; i < n; ++i) {
        const auto& links = paths_[static_cast<size_t>(starts[i].path)];
        lone = lone && !links.empty();
        for (int l : links) {
            lone = lone && users_[static_cast<size_t>(l)] == 0;
            if (mark_[static_cast<size_t>(l)] != kNone) continue;
            mark_[static_cast<size_t>(l)] = static_cast<uint32_t>(g.links.size());
            g.links.push_back(l);
        }
    }
    for (int l : g.links) mark_[static_cast<size_t>(l)] = kNone;
    for (size_t i = 0; i < n; ++i)
        for (int l : paths_[static_cast<size_t>(starts[i].path)]) ++users_[static_cast<size_t>(l)];
    if (!lone) {
        for (int l : g.links)
            if (const uint32_t other = lone_on_[static_cast<size_t>(l)]; other != kNone) share(other);
        for (size_t i = 0; i < n; ++i) begin_inner(starts[i].path, starts[i].bytes, starts[i].tag);
        return;
    }
    for (uint32_t k = 0; k < g.links.size(); ++k) mark_[static_cast<size_t>(g.links[k])] = k;
    for (size_t i = 0; i < n; ++i) {
        const auto& links = paths_[static_cast<size_t>(starts[i].path)];
        // The solver moves whole bytes, at least one.
        g.flows.push_back(Flow{starts[i].tag, starts[i].path, std::max(1.0, std::ceil(starts[i].bytes)), 0, 0, now_,
                               static_cast<uint32_t>(g.at.size()), static_cast<uint32_t>(links.size()), true});
        for (int l : links) g.at.push_back(mark_[static_cast<size_t>(l)]);
    }
    for (int l : g.links) mark_[static_cast<size_t>(l)] = kNone;
    g.running = n;
    const auto id = static_cast<uint32_t>(groups_.size());
    for (int l : g.links) lone_on_[static_cast<size_t>(l)] = id;
    fill_rates(g, std::vector<char>(n, 1));
    groups_.push_back(std::move(g));
    schedule(id);
}

// A lone group joins the solver, each running flow with the bytes it has left.
void LoneFlows::share(uint32_t id) {
    Group& g = groups_[id];
    for (int l : g.links)
        if (lone_on_[static_cast<size_t>(l)] == id) lone_on_[static_cast<size_t>(l)] = kNone;
    for (const Flow& f : g.flows)
        if (f.running) begin_inner(f.path, f.left - f.rate * (now_ - f.last), f.tag);
    ++g.version;
    g = Group{{}, {}, {}, 0, g.version};
}

void LoneFlows::begin_inner(int path, double bytes, uint64_t tag) {
    if (real_.empty() && inner_->now() < now_) {  // the solver's clock waits while only lone flows run
        std::vector<uint64_t> none;
        inner_->advance(now_, none);
    }
    inner_->start(path, bytes, tag);
    real_.emplace(tag, path);
}

// Max-min rates of the flows `which` (running ones): every link whose capacity per flow without a
// rate is the least fixes the rate of its flows, which then use that much of their other links.
void LoneFlows::fill_rates(Group& g, const std::vector<char>& which) {
    std::vector<double> left(g.links.size());  // capacity not yet given out
    std::vector<int> unset_on(g.links.size(), 0);
    for (size_t k = 0; k < g.links.size(); ++k) left[k] = capacity_[static_cast<size_t>(g.links[k])];
    size_t unset = 0;
    for (size_t i = 0; i < g.flows.size(); ++i)
        if (which[i]) {
            ++unset;
            for (uint32_t k = g.flows[i].first; k < g.flows[i].first + g.flows[i].count; ++k) ++unset_on[g.at[k]];
        }
    std::vector<char> set(g.flows.size()), bottleneck(g.links.size());
    for (size_t i = 0; i < g.flows.size(); ++i) set[i] = !which[i];
    while (unset > 0) {
        double share = std::numeric_limits<double>::infinity();
        for (size_t k = 0; k < g.links.size(); ++k)
            if (unset_on[k] > 0) share = std::min(share, left[k] / unset_on[k]);
        for (size_t k = 0; k < g.links.size(); ++k) bottleneck[k] = unset_on[k] > 0 && left[k] / unset_on[k] == share;
        for (size_t i = 0; i < g.flows.size(); ++i) {
            Flow& f = g.flows[i];
            if (set[i] || !crosses(g, f, bottleneck)) continue;
            set[i] = 1;
            --unset;
            f.rate = share;
            for (uint32_t j = f.first; j < f.first + f.count; ++j) {
                const uint32_t k = g.at[j];
                left[k] -= share;
                if (left[k] < capacity_[static_cast<size_t>(g.links[k])] * 1e-9) left[k] = 0;  // as maxmin/precision
                --unset_on[k];
            }
        }
        for (size_t k = 0; k < g.links.size(); ++k)
            if (left[k] == 0) unset_on[k] = 0;  // saturated: its other flows get their rates elsewhere
    }
    for (size_t i = 0; i < g.flows.size(); ++i)
        if (which[i]) g.flows[i].end = g.flows[i].last + g.flows[i].left / g.flows[i].rate;
}

void LoneFlows::schedule(uint32_t id) {
    Group& g = groups_[id];
    ++g.version;
    double first = std::numeric_limits<double>::infinity();
    for (const Flow& f : g.flows)
        if (f.running) first = std::min(first, f.end);
    ends_.push(End{first, id, g.version});
}

}  // namespace

std::unique_ptr<FlowSolver> make_lone_flow_solver(std::unique_ptr<FlowSolver> inner) {
    return std::make_unique<LoneFlows>(std::move(inner));
}

}  // namespace fathom::hardware
