// Round-robin: request i goes to replica i mod n, whatever the load.
#include "workloads/serving/router.h"

namespace fathom::workloads::serving {
namespace {

class RoundRobin final : public Router {
public:
    int route(const Request&, const std::vector<ReplicaLoad>& replicas) override {
        // The next available replica in turn (all of them without autoscaling).
        for (size_t tries = 0; tries < replicas.size(); ++tries) {
            const auto r = static_cast<size_t>(next_ % replicas.size());
            ++next_;
            if (replicas[r].available) return static_cast<int>(r);
        }
        return -1;
    }

private:
    uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Router> make_round_robin_router() { return std::make_unique<RoundRobin>(); }

}  // namespace fathom::workloads::serving
