#pragma once
// A training scenario file -> typed specs (model, cluster, plan). The schema (every key, its
// meaning, default) is documented in scenarios/README.md; unknown keys, values without units and
// impossible plans are InputErrors naming file, line and key.
#include <memory>
#include <string>
#include <vector>

#include "hardware/spec.h"
#include "models/cost/calibration_table.h"
#include "models/llm/model_spec.h"
#include "scenarios/catalog.h"
#include "workloads/training/training_plan.h"

namespace fathom::scenarios {

struct Scenario {
    std::string file;
    std::string name;
    uint64_t seed = 1;
    models::ModelSpec model;
    hardware::ClusterSpec cluster;
    workloads::TrainingPlan plan;
    // The accelerator's calibrated cost table, when its catalog entry names one.
    std::shared_ptr<const models::CalibrationTable> cost_table;
};

// Loads the calibration table an accelerator's catalog entry names (null if none).
std::shared_ptr<const models::CalibrationTable> load_cost_table(const hardware::AcceleratorSpec& acc);

// `overrides` are "dotted.key=value" strings (the CLI's --set), applied before validation.
Scenario load_scenario(const std::string& path, const Catalog& catalog, const std::vector<std::string>& overrides = {});
Scenario parse_scenario(const Node& root, const Catalog& catalog);

// Builds a cluster from catalog ids (used by scenarios and by `fathom compare`).
struct ClusterRequest {
    std::string accelerator;
    int nodes = 1;
    int gpus_per_node = 8;
    std::string scale_up;  // empty = the accelerator's default fabric
    std::string nic = "ib-ndr-400g";
    int nics_per_node = 8;
    hardware::ScaleOutTopology topology = hardware::ScaleOutTopology::RailOptimized;
    double oversubscription = 1.0;
    int nodes_per_leaf = 16;
    std::string pcie = "pcie-gen5-x16";
    std::string ssd;
};
hardware::ClusterSpec build_cluster(const ClusterRequest& r, const Catalog& catalog);

}  // namespace fathom::scenarios
