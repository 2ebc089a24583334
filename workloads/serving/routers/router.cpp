#include "workloads/serving/router.h"

namespace fathom::workloads::serving {

const RouterRegistry& router_registry() {
    static const RouterRegistry r = [] {
        RouterRegistry reg("router");
        reg.add("round-robin", "replicas in turn", make_round_robin_router);
        reg.add("least-outstanding", "fewest requests queued or running", make_least_outstanding_router);
        reg.add("least-kv", "lowest KV-cache use", make_least_kv_router);
        reg.add("prefix-affinity", "same session or prefix group to the same replica, balanced by load",
                make_prefix_affinity_router);
        reg.add("cache-aware",
                "SGLang's router: the replica whose routed prompts share most of the prompt (> 0.3), else the "
                "one with the most cache room, least loaded when imbalanced",
                make_cache_aware_router);
        return reg;
    }();
    return r;
}

RoutedPrefix routed_prefix(const Request& r) {
    if (r.session) return {r.session * 2 + 1, r.session_tokens};  // sessions and groups apart
    if (r.prefix_group) return {r.prefix_group * 2, r.prefix_tokens};
    return {};
}

int least_outstanding(const std::vector<ReplicaLoad>& replicas) {
    int best = -1;
    for (size_t i = 0; i < replicas.size(); ++i)
        if (replicas[i].available &&
            (best < 0 || replicas[i].outstanding < replicas[static_cast<size_t>(best)].outstanding))
            best = static_cast<int>(i);
    return best;
}

}  // namespace fathom::workloads::serving
