// Least KV load: the replica whose KV cache is least used by running sequences (ties: fewer
// outstanding requests, then the lowest index).
#include "workloads/serving/router.h"

namespace fathom::workloads::serving {
namespace {

class LeastKv final : public Router {
public:
    int route(const Request&, const std::vector<ReplicaLoad>& replicas) override {
        int best = -1;
        for (size_t i = 0; i < replicas.size(); ++i) {
            const auto& a = replicas[i];
            if (!a.available) continue;
            if (best < 0) {
                best = static_cast<int>(i);
                continue;
            }
            const auto& b = replicas[static_cast<size_t>(best)];
            if (a.kv_used < b.kv_used || (a.kv_used == b.kv_used && a.outstanding < b.outstanding))
                best = static_cast<int>(i);
        }
        return best;
    }
};

}  // namespace

std::unique_ptr<Router> make_least_kv_router() { return std::make_unique<LeastKv>(); }

}  // namespace fathom::workloads::serving
