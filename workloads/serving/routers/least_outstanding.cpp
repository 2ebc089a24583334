// Least outstanding requests (join the shortest queue): the replica with the fewest requests queued
// or running, the lowest index on ties.
#include "workloads/serving/router.h"

namespace fathom::workloads::serving {
namespace {

class LeastOutstanding final : public Router {
public:
    int route(const Request&, const std::vector<ReplicaLoad>& replicas) override { return least_outstanding(replicas); }
};

}  // namespace

std::unique_ptr<Router> make_least_outstanding_router() { return std::make_unique<LeastOutstanding>(); }

}  // namespace fathom::workloads::serving
