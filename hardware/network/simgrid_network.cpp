#include "hardware/network/simgrid_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "hardware/network/flow_solver.h"
#include "hardware/routing/routing.h"
#include "sim/error.h"

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

    CollectiveCost collective(Collective op, double bytes, const CommGroup& group) const override {
        if (group.count() <= 1 || bytes <= 0) return {0.0, "none"};
        const auto key = std::make_tuple(static_cast<int>(op), bytes, group.size, group.stride, group.offset, group.members);
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

    std::vector<CallResult> run(const std::vector<CollectiveCall>& calls) const override {
        struct Piece { size_t call; int path; double bytes; };
        std::vector<CallResult> results(calls.size());
        std::vector<double> fixed(calls.size(), 0.0);
        std::vector<Piece> pieces;
        std::map<std::vector<int>, int> path_ids;
        std::vector<std::vector<int>> paths;
        RouteCache cache(topo_);
        uint64_t flow_id = 0;

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
            if (sw != Topology::null_vertex()) return std::vector<Path>{Path{{to_switch_[static_cast<size_t>(a)], from_switch_[static_cast<size_t>(b)]}, 1.0}};
            const auto [e, ok] = boost::edge(topo_.gpu(a), topo_.gpu(b), topo_.graph());
            FATHOM_CHECK(ok, "no scale-up link between GPUs " + std::to_string(a) + " and " + std::to_string(b));
            return std::vector<Path>{Path{{topo_.link(e).id}, 1.0}};
        };
        // Between nodes: GPU to its NIC, the routing strategy from that NIC to the destination
        // NIC's leaf (one search per leaf, not per GPU), down to the NIC and the GPU.
        auto network = [&](int a, int b) {
            const Vertex nic_a = topo_.nic_of(a), nic_b = topo_.nic_of(b);
            std::vector<Path> legs = routing_->route(topo_, cache.toward(leaf_of_.at(nic_b)), nic_a, flow_id, b);
            if (legs.empty()) legs.push_back(Path{{}, 1.0});
            for (Path& p : legs) {
                p.links.insert(p.links.begin(), host_up_[static_cast<size_t>(a)]);
                p.links.push_back(leaf_down_.at(nic_b));
                p.links.push_back(host_down_[static_cast<size_t>(b)]);
            }
            return legs;
        };
        const int per_node = cluster_.gpus_per_node;
        for (size_t i = 0; i < calls.size(); ++i) {
            const CollectiveCall& call = calls[i];
            results[i].start = results[i].end = call.start;
            if (call.group.count() <= 1 || call.bytes <= 0) {
                results[i].algorithm = "none";
                continue;
            }
            for (int m = 0; m < call.group.count(); ++m)
                if (call.group.rank(m) < 0 || call.group.rank(m) >= topo_.gpus())
                    throw sim::InputError("communicator rank " + std::to_string(call.group.rank(m)) + " outside the " +
                                          std::to_string(topo_.gpus()) + "-GPU cluster");
            const CollectivePlan p = analytical_->plan(call.op, call.bytes, call.group);
            results[i].algorithm = p.algorithm;
            fixed[i] = p.fixed_seconds;
            for (const Flow& f : p.flows) {
                ++flow_id;
                std::vector<Path> route;
                if (f.src / per_node == f.dst / per_node) {
                    route = intra(f.src, f.dst);
                } else {
                    const int exit = f.via >= 0 ? f.via : f.src;
                    join(route, intra(f.src, exit));
                    join(route, network(exit, f.dst));
                }
                for (const Path& r : route) {
                    auto [it, fresh] = path_ids.emplace(r.links, static_cast<int>(paths.size()));
                    if (fresh) paths.push_back(r.links);
                    pieces.push_back(Piece{i, it->second, f.bytes * r.share});
                    ++results[i].flows;
                }
            }
        }

        // One simulation: links, paths, then the calls' flows at their start times in order.
        auto solver = make_simgrid_solver();
        for (const auto& e : topo_.edges_by_id()) solver->add_link(topo_.link(e).capacity());
        for (const auto& p : paths) solver->add_path(p);
        std::vector<size_t> order(calls.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return calls[a].start < calls[b].start; });
        std::vector<std::vector<size_t>> pieces_of(calls.size());
        for (size_t k = 0; k < pieces.size(); ++k) pieces_of[pieces[k].call].push_back(k);
        std::vector<double> last(calls.size(), 0.0);
        std::vector<uint64_t> done;
        size_t next = 0, outstanding = 0;
        for (;;) {
            const double now = solver->now();
            while (next < order.size() && calls[order[next]].start <= now) {
                const size_t c = order[next++];
                last[c] = calls[c].start;
                for (size_t k : pieces_of[c])
                    if (pieces[k].bytes > 0) {
                        solver->start(pieces[k].path, pieces[k].bytes, k);
                        ++outstanding;
                    }
            }
            if (next == order.size() && outstanding == 0) break;
            const double until = next < order.size() ? calls[order[next]].start : std::numeric_limits<double>::infinity();
            const double t = solver->advance(until, done);
            for (uint64_t k : done) {
                --outstanding;
                last[pieces[k].call] = std::max(last[pieces[k].call], t);
            }
        }
        for (size_t i = 0; i < calls.size(); ++i)
            if (results[i].algorithm != "none") results[i].end = last[i] + fixed[i];
        return results;
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

}  // namespace

std::unique_ptr<FlowNetworkModel> make_simgrid_network(const ClusterSpec& cluster, const std::string& routing,
                                                       const std::string& algorithm) {
    return std::make_unique<SimgridNetwork>(cluster, routing, algorithm);
}

}  // namespace fathom::hardware
