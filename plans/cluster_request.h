#pragma once
// A cluster as a scenario describes it: catalog ids and sizes (plans/keys.h declares each field).
// build_cluster resolves it against the catalog into a hardware::ClusterSpec.
#include "hardware/spec.h"

#include <string>

namespace fathom::plans {

class Catalog;

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
    std::string routing = "ecmp";
    hardware::NetworkBackend network = hardware::NetworkBackend::Analytical;
    std::string pcie;  // empty: the accelerator's host link, else PCIe 5.0 x16
    std::string ssd;   // empty = none
    int ssds_per_node = 1;
    std::string storage;     // the shared file system's catalog id; empty = none
    double host_memory = 0;  // a node's host DRAM, bytes; 0 = not stated
};

// Throws sim::InputError for unknown ids or a node larger than its fabric's domain.
hardware::ClusterSpec build_cluster(const ClusterRequest& r, const Catalog& catalog);

}  // namespace fathom::plans
