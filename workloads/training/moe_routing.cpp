#include "workloads/training/moe_routing.h"

#include "sim/random.h"

#include <algorithm>
#include <numeric>

namespace fathom::workloads {

namespace {
constexpr int kPlacements = 64;
}

std::vector<double> expert_shares(const models::ModelSpec& m, const MoeRouting& r, int draw) {
    const size_t E = static_cast<size_t>(m.moe.num_experts);
    std::vector<double> share(E, 1.0 / static_cast<double>(E));
    if (!r.expert_loads.empty()) {
        const double total =
            static_cast<double>(std::accumulate(r.expert_loads.begin(), r.expert_loads.end(), int64_t{0}));
        for (size_t e = 0; e < E; ++e) share[e] = static_cast<double>(r.expert_loads[e]) / total;
        return share;
    }
    if (r.zipf <= 0) return share;
    std::vector<double> popularity(E);
    for (size_t i = 0; i < E; ++i) popularity[i] = 1.0 / std::pow(static_cast<double>(i + 1), r.zipf);
    const double total = std::accumulate(popularity.begin(), popularity.end(), 0.0);
    // A Fisher-Yates shuffle of the popularity ranks onto experts from a fixed stream per draw.
    std::vector<size_t> order(E);
    std::iota(order.begin(), order.end(), size_t{0});
    sim::RandomStream rng(sim::RandomStreams(static_cast<uint64_t>(draw) + 1).stream("moe-placement"));
    for (size_t i = E; i-- > 1;)
        std::swap(order[i], order[static_cast<size_t>(rng.uniform() * static_cast<double>(i + 1))]);
    for (size_t e = 0; e < E; ++e) share[e] = popularity[order[e]] / total;
    return share;
}

double busiest_rank_load(const models::ModelSpec& m, int ep, const MoeRouting& r) {
    if (!m.moe.enabled()) return 1.0;
    const int64_t E = m.moe.num_experts, per_rank = E / ep;
    const double cap = r.capacity_factor > 0 ? r.capacity_factor / static_cast<double>(E) : 1.0;
    const bool random = r.expert_loads.empty() && r.zipf > 0;
    const int draws = random ? kPlacements : 1;
    double sum = 0;
    for (int d = 0; d < draws; ++d) {
        const std::vector<double> share = expert_shares(m, r, d);
        double busiest = 0;
        for (int rank = 0; rank < ep; ++rank) {
            double load = 0;
            for (int64_t e = rank * per_rank; e < (rank + 1) * per_rank; ++e)
                load += std::min(share[static_cast<size_t>(e)], cap);
            busiest = std::max(busiest, load);
        }
        sum += busiest * ep;  // the mean rank holds 1 / ep of the tokens
    }
    return sum / draws;
}

}  // namespace fathom::workloads
