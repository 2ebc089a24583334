// Prefix affinity: a request of a session (else of a shared-prefix group) goes to the replica that
// served that session (group) last, where its prefix is cached, unless that replica is overloaded
// (more than twice the outstanding requests of the least loaded one, plus 4); then, and for
// requests without a shared prefix, to the least loaded replica, which the session (group) then
// follows.
#include "workloads/serving/router.h"

#include <unordered_map>

namespace fathom::workloads::serving {
namespace {

class PrefixAffinity final : public Router {
public:
    int route(const Request& r, const std::vector<ReplicaLoad>& replicas) override {
        const int least = least_outstanding(replicas);
        const uint64_t key = routed_prefix(r).key;
        if (key == 0) return least;
        auto it = home_.find(key);
        if (it != home_.end()) {
            const auto& h = replicas[static_cast<size_t>(it->second)];
            if (h.available && h.outstanding <= 2 * replicas[static_cast<size_t>(least)].outstanding + 4)
                return it->second;
        }
        home_[key] = least;
        return least;
    }

private:
    std::unordered_map<uint64_t, int> home_;
};

}  // namespace

std::unique_ptr<Router> make_prefix_affinity_router() { return std::make_unique<PrefixAffinity>(); }

}  // namespace fathom::workloads::serving
