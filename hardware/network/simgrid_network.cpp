#include "hardware/network/simgrid_network.h"

#include "hardware/network/flow_solver.h"
#include "hardware/network/transfer_timer.h"
#include "hardware/routing/routing.h"
#include "sim/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

namespace fathom::hardware {
namespace {

class SimgridNetwork final : public FlowNetworkModel {
public:
    SimgridNetwork(const ClusterSpec& c, const std::string& routing, const std::string& algorithm)
        : cluster_(c),
          analytical_(make_analytical_network(c, algorithm)),
          routing_(routing_registry().get(routing).factory()),
          topo_(build_topology(c)) {
        // The fixed first and last hops of every route, looked up once.
        const TopoGraph& g = topo_.graph();
        auto id = [&](Vertex a, Vertex b) {
            const auto [e, ok] = boost::edge(a, b, g);
            FATHOM_CHECK(ok, "topology: no link " + g[a].name + " -> " + g[b].name);
            return g[e].id;
        };
        const int n = topo_.gpus();
        to_switch_.assign(static_cast<size_t>(n), -1);
        from_switch_.assign(static_cast<size_t>(n), -1);
        host_up_.assign(static_cast<size_t>(n), -1);
        host_down_.assign(static_cast<size_t>(n), -1);
        for (int r = 0; r < n; ++r) {
            const Vertex gpu = topo_.gpu(r);
            const Vertex sw = topo_.scale_up_switch(r / c.gpus_per_node);
            if (sw != Topology::null_vertex()) {
                to_switch_[static_cast<size_t>(r)] = id(gpu, sw);
                from_switch_[static_cast<size_t>(r)] = id(sw, gpu);
            }
            const Vertex nic = topo_.nic_of(r);
            if (nic == Topology::null_vertex()) continue;
            host_up_[static_cast<size_t>(r)] = id(gpu, nic);
            host_down_[static_cast<size_t>(r)] = id(nic, gpu);
            if (leaf_of_.count(nic)) continue;
            for (auto [e, end] = boost::out_edges(nic, g); e != end; ++e)
                if (g[*e].level == LinkLevel::ScaleOut) {
                    leaf_of_[nic] = boost::target(*e, g);
                    leaf_down_[nic] = id(boost::target(*e, g), nic);
                }
        }
    }

    GroupLayout layout(const CommGroup& g) const override { return analytical_->layout(g); }
    CollectivePlan plan(Collective op, double bytes, const CommGroup& g) const override {
        return analytical_->plan(op, bytes, g);
    }
    const Topology& topology() const override { return topo_; }
    void set_progress(std::function<void(int64_t)> progress) override { progress_ = std::move(progress); }
    std::unique_ptr<TransferTimer> timer(sim::Simulator& sim) const override {
        return make_flow_timer(sim, *this, session());
    }

    CollectiveCost collective(Collective op, double bytes, const CommGroup& group) const override {
        if (group.count() <= 1 || bytes <= 0) return {0.0, "none"};
        const auto key =
            std::make_tuple(static_cast<int>(op), bytes, group.size, group.stride, group.offset, group.members);
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (auto it = cache_.find(key); it != cache_.end()) return it->second;
        }
        std::vector<CollectiveCall> calls;
        for (const CommGroup& g : sibling_groups(group, cluster_.gpus())) calls.push_back({op, bytes, g, 0.0});
        const std::vector<CallResult> results = run(calls);
        CollectiveCost cost{0.0, results.front().algorithm};
        for (const auto& r : results) cost.seconds = std::max(cost.seconds, r.seconds());
        std::lock_guard<std::mutex> lock(mu_);
        cache_.emplace(key, cost);
        if (progress_) progress_(static_cast<int64_t>(cache_.size()));
        return cost;
    }

    std::vector<CallResult> run(const std::vector<CollectiveCall>& calls) const override;
    std::unique_ptr<FlowSession> session() const override;

    // The algorithm a call uses ("none": nothing to move).
    std::string algorithm_of(const CollectiveCall& c) const {
        if (c.group.count() <= 1 || c.bytes <= 0) return "none";
        return analytical_->plan(c.op, c.bytes, c.group).algorithm;
    }

    struct Piece {
        int path;
        double bytes;
    };
    // The paths of every flow of `call` (added to `paths`), in pieces; its fixed part in `fixed`.
    // `flow_id` numbers each flow for the routing's hash (ECMP).
    std::vector<Piece> route(const CollectiveCall& call, std::map<std::vector<int>, int>& path_ids,
                             std::vector<std::vector<int>>& paths, RouteCache& cache,
                             const std::function<uint64_t(const Flow&)>& flow_id, double& fixed) const {
        std::vector<Piece> pieces;
        fixed = 0;
        if (call.group.count() <= 1 || call.bytes <= 0) return pieces;
        for (int m = 0; m < call.group.count(); ++m)
            if (call.group.rank(m) < 0 || call.group.rank(m) >= topo_.gpus())
                throw sim::InputError("communicator rank " + std::to_string(call.group.rank(m)) + " outside the " +
                                      std::to_string(topo_.gpus()) + "-GPU cluster");
        // Every path so far followed by every path of `leg`.
        auto join = [](std::vector<Path>& into, std::vector<Path> leg) {
            if (into.empty()) {
                into = std::move(leg);
                return;
            }
            std::vector<Path> joined;
            for (const Path& p : into)
                for (const Path& q : leg) {
                    Path j = p;
                    j.links.insert(j.links.end(), q.links.begin(), q.links.end());
                    j.share = p.share * q.share;
                    joined.push_back(std::move(j));
                }
            into = std::move(joined);
        };
        // Inside a node: through its switch, or the direct link of a mesh (one path either way).
        auto intra = [&](int a, int b) {
            if (a == b) return std::vector<Path>{};
            const Vertex sw = topo_.scale_up_switch(a / cluster_.gpus_per_node);
            if (sw != Topology::null_vertex())
                return std::vector<Path>{
                    Path{{to_switch_[static_cast<size_t>(a)], from_switch_[static_cast<size_t>(b)]}, 1.0}};
            const auto [e, ok] = boost::edge(topo_.gpu(a), topo_.gpu(b), topo_.graph());
            FATHOM_CHECK(ok, "no scale-up link between GPUs " + std::to_string(a) + " and " + std::to_string(b));
            return std::vector<Path>{Path{{topo_.link(e).id}, 1.0}};
        };
        // Between nodes: GPU to its NIC, the routing strategy from that NIC to the destination
        // NIC's leaf (one search per leaf, not per GPU), down to the NIC and the GPU.
        auto network = [&](int a, int b, uint64_t id) {
            const Vertex nic_a = topo_.nic_of(a), nic_b = topo_.nic_of(b);
            std::vector<Path> legs = routing_->route(topo_, cache.toward(leaf_of_.at(nic_b)), nic_a, id, b);
            if (legs.empty()) legs.push_back(Path{{}, 1.0});
            for (Path& p : legs) {
                p.links.insert(p.links.begin(), host_up_[static_cast<size_t>(a)]);
                p.links.push_back(leaf_down_.at(nic_b));
                p.links.push_back(host_down_[static_cast<size_t>(b)]);
            }
            return legs;
        };
        const int per_node = cluster_.gpus_per_node;
        const CollectivePlan p = analytical_->plan(call.op, call.bytes, call.group);
        fixed = p.fixed_seconds;
        for (const Flow& f : p.flows) {
            const uint64_t id = flow_id(f);
            std::vector<Path> route;
            if (f.src / per_node == f.dst / per_node) {
                route = intra(f.src, f.dst);
            } else {
                const int exit = f.via >= 0 ? f.via : f.src;
                join(route, intra(f.src, exit));
                join(route, network(exit, f.dst, id));
            }
            for (const Path& r : route) {
                auto [it, fresh] = path_ids.emplace(r.links, static_cast<int>(paths.size()));
                if (fresh) paths.push_back(r.links);
                pieces.push_back(Piece{it->second, f.bytes * r.share});
            }
        }
        return pieces;
    }

private:
    ClusterSpec cluster_;
    std::unique_ptr<NetworkModel> analytical_;
    std::unique_ptr<RoutingStrategy> routing_;
    Topology topo_;
    // Per GPU rank: link ids to and from its scale-up switch and its NIC; per NIC: its leaf and
    // the leaf-to-NIC link.
    std::vector<int> to_switch_, from_switch_, host_up_, host_down_;
    std::map<Vertex, Vertex> leaf_of_;
    std::map<Vertex, int> leaf_down_;
    using Key = std::tuple<int, double, int, int, int, std::vector<int>>;
    mutable std::mutex mu_;
    mutable std::map<Key, CollectiveCost> cache_;
    std::function<void(int64_t)> progress_;
};

// One SimGrid solver (child process) per session; paths are collected while patterns are declared
// and handed to the solver at the first start.
class Session final : public FlowSession {
public:
    explicit Session(const SimgridNetwork& net) : net_(net), cache_(net.topology()) {}

    int add_pattern(const std::vector<CollectiveCall>& calls, int owner) override {
        FATHOM_CHECK(!solver_ && isolated_.empty(),
                     "flow session: pattern declared after the first start (a transfer whose route was not "
                     "declared before transfers ran)");
        // The bytes a pattern moves over one path travel as one flow (NCCL's channels between two
        // GPUs over the same links are one stream to the fabric), in order of first use.
        Pattern p;
        p.owner = owner >= 0 ? owner : -1 - static_cast<long long>(patterns_.size());
        Connections& known = connections_[p.owner];
        Connections seen;  // this pattern's flows per connection so far
        auto flow_id = [&](const Flow& f) {
            Connection c{(static_cast<uint64_t>(static_cast<uint32_t>(f.src)) << 32) | static_cast<uint32_t>(f.dst),
                         static_cast<uint64_t>(static_cast<uint32_t>(f.via)) << 32};
            c.second |= seen[c]++;
            auto [it, fresh] = known.emplace(c, 0);
            if (fresh) it->second = ++flow_id_;
            return it->second;
        };
        for (const CollectiveCall& c : calls) {
            double fixed = 0;
            for (const auto& piece : net_.route(c, path_ids_, paths_, cache_, flow_id, fixed)) {
                auto [it, fresh] = at_.emplace(piece.path, p.pieces.size());
                if (fresh) p.pieces.push_back(piece);
                else p.pieces[it->second].bytes += piece.bytes;
            }
            p.fixed = std::max(p.fixed, fixed);
        }
        at_.clear();
        if (owner < 0) connections_.erase(p.owner);
        patterns_.push_back(std::move(p));
        return static_cast<int>(patterns_.size()) - 1;
    }
    double fixed_seconds(int pattern) const override { return patterns_.at(static_cast<size_t>(pattern)).fixed; }
    bool isolated(int pattern) const override {
        if (isolated_.empty()) find_isolated();
        return isolated_.at(static_cast<size_t>(pattern));
    }
    double alone_seconds(int pattern) const override;
    int pieces(int pattern) const { return static_cast<int>(patterns_.at(static_cast<size_t>(pattern)).pieces.size()); }

    size_t start(int pattern, double scale, uint64_t tag) override {
        const Pattern& p = patterns_.at(static_cast<size_t>(pattern));
        if (!solver_) {
            solver_ = make_lone_flow_solver(make_simgrid_solver());
            for (double c : capacities()) solver_->add_link(c);
            for (const auto& path : paths_) solver_->add_path(path);
        }
        const uint64_t instance = next_instance_++;
        size_t n = 0;
        for (const Piece& piece : p.pieces) {
            const double bytes = piece.bytes * scale;
            if (!(bytes > 0)) continue;
            const uint64_t flow = next_flow_++;
            flow_instance_.emplace(flow, instance);
            solver_->start(piece.path, bytes, flow);
            ++n;
        }
        flows_started_ += n;
        if (n == 0) ended_.push_back(tag);
        else instances_.emplace(instance, Instance{tag, n});
        return n;
    }

    double advance(double until, std::vector<uint64_t>& done) override {
        done.clear();
        if (!ended_.empty()) {  // instances with no flows end where they started
            done.swap(ended_);
            return now();
        }
        if (!solver_) {
            if (std::isfinite(until)) idle_now_ = std::max(idle_now_, until);
            return idle_now_;
        }
        std::vector<uint64_t> flows;
        for (;;) {
            const double t = solver_->advance(until, flows);
            for (uint64_t f : flows) {
                const auto it = flow_instance_.find(f);
                const uint64_t instance = it->second;
                flow_instance_.erase(it);
                auto inst = instances_.find(instance);
                if (--inst->second.remaining == 0) {
                    done.push_back(inst->second.tag);
                    instances_.erase(inst);
                }
            }
            // Flows ended but no instance did: keep going toward `until`.
            if (!done.empty() || flows.empty() || t >= until) return t;
        }
    }
    double now() const override { return solver_ ? solver_->now() : idle_now_; }
    uint64_t flows_started() const override { return flows_started_; }

private:
    using Piece = SimgridNetwork::Piece;
    struct Pattern {
        std::vector<Piece> pieces;
        double fixed = 0;
        long long owner = 0;  // negative: a pattern of its own
    };
    // A connection (source and destination rank; route-through rank and the how-manieth such flow
    // of a pattern it is) and the flow id it was routed with.
    using Connection = std::pair<uint64_t, uint64_t>;
    struct ConnectionHash {
        size_t operator()(const Connection& c) const {
            return std::hash<uint64_t>()(c.first * 0x9e3779b97f4a7c15ULL ^ c.second);
        }
    };
    using Connections = std::unordered_map<Connection, uint64_t, ConnectionHash>;

    // Which patterns share no link with a pattern of another owner: once, when they are complete.
    void find_isolated() const;
    // The capacity of each link, by id.
    const std::vector<double>& capacities() const {
        if (capacity_.empty())
            for (const auto& e : net_.topology().edges_by_id()) capacity_.push_back(net_.topology().link(e).capacity());
        return capacity_;
    }
    struct Instance {
        uint64_t tag;
        size_t remaining;
    };
    const SimgridNetwork& net_;
    RouteCache cache_;
    std::map<std::vector<int>, int> path_ids_;
    std::vector<std::vector<int>> paths_;
    uint64_t flow_id_ = 0;
    std::map<long long, Connections> connections_;  // per owner
    std::map<int, size_t> at_;                      // add_pattern's scratch: piece of each path
    std::vector<Pattern> patterns_;
    std::unique_ptr<FlowSolver> solver_;
    double idle_now_ = 0;
    uint64_t next_instance_ = 0, next_flow_ = 0, flows_started_ = 0;
    std::unordered_map<uint64_t, uint64_t> flow_instance_;
    std::unordered_map<uint64_t, Instance> instances_;
    std::vector<uint64_t> ended_;
    mutable std::vector<bool> isolated_;    // per pattern (isolated())
    mutable std::vector<double> alone_;     // per pattern (alone_seconds()), NaN until asked
    mutable std::vector<double> capacity_;  // per link (capacities())
};

void Session::find_isolated() const {
    // The links of each pattern, and how many owners use each link.
    std::vector<std::vector<int>> links(patterns_.size());
    std::map<long long, std::vector<int>> of_owner;
    for (size_t k = 0; k < patterns_.size(); ++k) {
        for (const Piece& piece : patterns_[k].pieces)
            links[k].insert(links[k].end(), paths_[static_cast<size_t>(piece.path)].begin(),
                            paths_[static_cast<size_t>(piece.path)].end());
        std::sort(links[k].begin(), links[k].end());
        links[k].erase(std::unique(links[k].begin(), links[k].end()), links[k].end());
        auto& o = of_owner[patterns_[k].owner];
        o.insert(o.end(), links[k].begin(), links[k].end());
    }
    std::vector<int> users(capacities().size(), 0);
    for (auto& [owner, ls] : of_owner) {
        std::sort(ls.begin(), ls.end());
        ls.erase(std::unique(ls.begin(), ls.end()), ls.end());
        for (int l : ls) ++users[static_cast<size_t>(l)];
    }
    for (const auto& ls : links)
        isolated_.push_back(
            std::all_of(ls.begin(), ls.end(), [&users](int l) { return users[static_cast<size_t>(l)] == 1; }));
}

// The inner solver of a lone-flow solver that only ever holds one group of flows alone.
class NoSolver final : public FlowSolver {
public:
    int add_link(double) override { return links_++; }
    int add_path(const std::vector<int>&) override { return paths_++; }
    void start(int, double, uint64_t) override { FATHOM_CHECK(false, "flow session: flows alone met other flows"); }
    double advance(double until, std::vector<uint64_t>& done) override {
        done.clear();
        return until;
    }
    double now() const override { return 0; }

private:
    int links_ = 0, paths_ = 0;
};

double Session::alone_seconds(int pattern) const {
    if (alone_.empty()) alone_.assign(patterns_.size(), std::numeric_limits<double>::quiet_NaN());
    double& seconds = alone_.at(static_cast<size_t>(pattern));
    if (!std::isnan(seconds)) return seconds;
    // The pattern's flows from 0 on a solver of their own links, shared as the lone-flow solver
    // shares a lone group (as in a session where nothing else runs).
    const auto solver = make_lone_flow_solver(std::make_unique<NoSolver>());
    std::unordered_map<int, int> local;
    size_t flows = 0;
    for (const Piece& piece : patterns_[static_cast<size_t>(pattern)].pieces) {
        const auto& path = paths_[static_cast<size_t>(piece.path)];
        if (path.empty() || !(piece.bytes > 0)) continue;
        std::vector<int> links;
        for (int l : path) {
            auto [it, fresh] = local.emplace(l, static_cast<int>(local.size()));
            if (fresh) solver->add_link(capacities()[static_cast<size_t>(l)]);
            links.push_back(it->second);
        }
        solver->start(solver->add_path(links), piece.bytes, flows++);
    }
    seconds = 0;
    std::vector<uint64_t> done;
    for (size_t ended = 0; ended < flows; ended += done.size())
        seconds = solver->advance(std::numeric_limits<double>::infinity(), done);
    return seconds;
}

std::unique_ptr<FlowSession> SimgridNetwork::session() const { return std::make_unique<Session>(*this); }

std::vector<CallResult> SimgridNetwork::run(const std::vector<CollectiveCall>& calls) const {
    std::vector<CallResult> results(calls.size());
    Session session(*this);
    std::vector<int> pattern(calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
        results[i].start = results[i].end = calls[i].start;
        pattern[i] = session.add_pattern({calls[i]}, -1);
        results[i].algorithm = algorithm_of(calls[i]);
    }
    // The calls start at their times in order; each ends with its last flow plus its fixed part.
    std::vector<size_t> order(calls.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return calls[a].start < calls[b].start; });
    std::vector<uint64_t> done;
    size_t next = 0, outstanding = 0;
    for (;;) {
        while (next < order.size() && calls[order[next]].start <= session.now()) {
            session.start(pattern[order[next]], 1.0, order[next]);
            ++next;
            ++outstanding;
        }
        if (next == order.size() && outstanding == 0) break;
        const double until = next < order.size() ? calls[order[next]].start : std::numeric_limits<double>::infinity();
        const double t = session.advance(until, done);
        for (uint64_t k : done) {
            --outstanding;
            if (results[k].algorithm != "none")
                results[k].end = std::max(calls[k].start, t) + session.fixed_seconds(pattern[k]);
        }
    }
    for (size_t i = 0; i < calls.size(); ++i) results[i].flows = session.pieces(pattern[i]);
    return results;
}

}  // namespace

std::unique_ptr<FlowNetworkModel> make_simgrid_network(const ClusterSpec& cluster, const std::string& routing,
                                                       const std::string& algorithm) {
    return std::make_unique<SimgridNetwork>(cluster, routing, algorithm);
}

}  // namespace fathom::hardware
