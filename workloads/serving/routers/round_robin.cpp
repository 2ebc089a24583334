// Round-robin: request i goes to replica i mod n, whatever the load.
#include "workloads/serving/router.h"

namespace fathom::workloads::serving {
namespace {

class RoundRobin final : public Router {
public:
    int route(const Request&, const std::vector<ReplicaLoad>& replicas) override {
        const int r = static_cast<int>(next_ % replicas.size());
        ++next_;
        return r;
    }

private:
    uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Router> make_round_robin_router() { return std::make_unique<RoundRobin>(); }

}  // namespace fathom::workloads::serving
