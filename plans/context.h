#pragma once
// What every evaluation shares: the catalogs and the calibrated cost tables (loaded once, immutable,
// safe to read from many threads; no evaluation copies or re-reads them), the seed of the named
// random streams, and the collective algorithm to force (empty: the fastest per call). Built by
// scenarios::make_context; plan searchers evaluate thousands of plans against one context.
#include "hardware/spec.h"
#include "models/cost/calibration_table.h"
#include "plans/catalog.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace fathom::plans {

struct EvaluationContext {
    std::shared_ptr<const Catalog> catalog;
    // By accelerator id, for accelerators whose catalog entry names a table.
    std::map<std::string, std::shared_ptr<const models::CalibrationTable>> cost_tables;
    uint64_t seed = 1;
    std::string collective_algorithm;
    // The most tasks a training step's replay may hold (`--max-tasks`): about 170 bytes each, so the
    // default, 1e8, bounds a replay at about 17 GB. A plan estimated above it is refused before
    // anything is allocated (replay_task_estimate).
    int64_t max_tasks = 100'000'000;
    // The most requests a serving simulation may hold (`--max-requests`): up to about 400 bytes each
    // (offline arrivals keep every request waiting at once; measured 370), so the default, 1e7,
    // bounds a run at about 4 GB (and about 80 s at the 8 us a request measured for Llama 3 70B).
    // Generated traffic above it is refused before the run, a trace when its reader passes it.
    int64_t max_requests = 10'000'000;
    // The network backend for every cluster evaluated (compare --network); unset: each cluster's own.
    std::optional<hardware::NetworkBackend> network;

    hardware::ClusterSpec with_network(hardware::ClusterSpec c) const {
        if (network) c.network = *network;
        return c;
    }

    // The table of an accelerator, or null (roofline costs).
    std::shared_ptr<const models::CalibrationTable> cost_table(const std::string& accelerator_id) const {
        const auto it = cost_tables.find(accelerator_id);
        return it == cost_tables.end() ? nullptr : it->second;
    }
};

}  // namespace fathom::plans
