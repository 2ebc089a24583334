#pragma once
// Routers: which replica of a pool serves a request. One per file, behind Router, registered by
// name: round-robin, least-outstanding (fewest requests queued or running), least-kv (lowest KV
// cache use), prefix-affinity (requests of the same session or shared-prefix group go to the
// replica that served the last one, so its prefix cache hits, unless that replica has twice the
// outstanding requests of the least loaded one plus a slack; SGLang's cache-aware router balances
// the same way), cache-aware (SGLang's router: the replica whose routed prompts share the most
// with the request, above a threshold, else the one with the most cache room, unless the load is
// imbalanced).
#include "sim/registry.h"
#include "workloads/serving/request.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace fathom::workloads::serving {

struct ReplicaLoad {
    int64_t outstanding = 0;  // requests routed there and not finished
    double kv_used = 0;       // share of its KV blocks in use by sequences
    // Takes new requests (autoscaling: not starting, draining or off). A router picks one that
    // does; at least one does.
    bool available = true;
};

class Router {
public:
    virtual ~Router() = default;
    virtual int route(const Request& r, const std::vector<ReplicaLoad>& replicas) = 0;
};

using RouterFactory = std::unique_ptr<Router> (*)();
using RouterRegistry = sim::Registry<RouterFactory>;
const RouterRegistry& router_registry();

std::unique_ptr<Router> make_round_robin_router();
std::unique_ptr<Router> make_least_outstanding_router();
std::unique_ptr<Router> make_least_kv_router();
std::unique_ptr<Router> make_prefix_affinity_router();
std::unique_ptr<Router> make_cache_aware_router();

// The available replica with the fewest outstanding requests (lowest index on ties).
int least_outstanding(const std::vector<ReplicaLoad>& replicas);

// The prefix a request shares, for routers that follow it: its session's history, else its
// prefix group's prefix, as a key (sessions odd, groups even; 0: none) and its tokens.
struct RoutedPrefix {
    uint64_t key = 0;
    int64_t tokens = 0;
    bool session() const { return key % 2 == 1; }
};
RoutedPrefix routed_prefix(const Request& r);

}  // namespace fathom::workloads::serving
