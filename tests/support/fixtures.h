#pragma once
// Shared test fixtures: the catalogs of the source tree in an evaluation context (loaded once per
// test binary), and a shorthand that predicts one training step and requires the plan to be valid.
#include "plans/cluster_request.h"
#include "plans/evaluate.h"
#include "scenarios/catalog.h"
#include "scenarios/scenario.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fathom::testing {

inline const std::string kSource = FATHOM_SOURCE_DIR;

// The source tree's catalogs and calibration tables.
inline const plans::EvaluationContext& source_context() {
    static const plans::EvaluationContext c = scenarios::make_context(scenarios::load_catalog(kSource));
    return c;
}
inline const plans::Catalog& source_catalog() { return *source_context().catalog; }

// `nodes` nodes of `gpus_per_node` H100 SXM 80GB from the source catalog (its default fabrics).
inline hardware::ClusterSpec h100_cluster(int gpus_per_node, int nodes = 1) {
    plans::ClusterRequest r;
    r.accelerator = "h100-sxm-80gb";
    r.gpus_per_node = gpus_per_node;
    r.nodes = nodes;
    return plans::build_cluster(r, source_catalog());
}

// A hand-built cluster for the network tests (no catalog): switched scale-up of 450 GB/s x 0.8 per
// GPU with 2 us steps, one 50 GB/s x 0.9 NIC per GPU (5 us NIC to NIC, 1 us per further switch
// hop), 5 us launch, under the given scale-out topology.
inline hardware::ClusterSpec network_cluster(int nodes, int gpus_per_node, int nodes_per_leaf,
                                             hardware::ScaleOutTopology t, double oversubscription = 1,
                                             int nics_per_node = 0) {
    hardware::ClusterSpec c;
    c.accelerator.launch_overhead = 5e-6;
    c.nodes = nodes;
    c.gpus_per_node = gpus_per_node;
    c.scale_up.topology = hardware::ScaleUpTopology::Switched;
    c.scale_up.bandwidth_per_gpu = 450e9;
    c.scale_up.link_bandwidth = 450e9;
    c.scale_up.busbw_efficiency = 0.8;
    c.scale_up.step_latency = 2e-6;
    c.nic.bandwidth = 50e9;
    c.nic.latency = 5e-6;
    c.nic.switch_latency = 1e-6;
    c.nic.efficiency = 0.9;
    c.nics_per_node = nics_per_node > 0 ? nics_per_node : gpus_per_node;
    c.nodes_per_leaf = nodes_per_leaf;
    c.topology = t;
    c.oversubscription = oversubscription;
    return c;
}

inline std::string example(const std::string& name) { return kSource + "/scenarios/examples/" + name; }

// A copy of the source tree's catalogs in the temporary directory `name` in which the first `from`
// of `file` (relative to the copy) reads `to`: the root to load_catalog for a bad-input test.
inline std::string catalog_copy_with(const std::string& name, const std::string& file, const std::string& from,
                                     const std::string& to) {
    namespace fs = std::filesystem;
    const fs::path tmp = fs::temp_directory_path() / name;
    fs::remove_all(tmp);
    for (const char* dir : {"hardware/catalog", "hardware/calibration", "models/catalog", "workloads/stacks"}) {
        fs::create_directories(tmp / dir);
        fs::copy(fs::path(kSource) / dir, tmp / dir, fs::copy_options::recursive);
    }
    std::ifstream in(tmp / file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    std::ofstream(tmp / file) << text;
    return tmp.string();
}

// One training step of a valid plan; a context without tables prices every op with the roofline.
inline workloads::StepReport predict(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                     const workloads::TrainingPlan& plan,
                                     const plans::EvaluationContext& context = plans::EvaluationContext{}) {
    const plans::Outcome o = plans::evaluate_training(model, cluster, plan, context);
    INFO(plans::describe(o.violations));
    REQUIRE(o.ok());
    return *o.training();
}

}  // namespace fathom::testing
