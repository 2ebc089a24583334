#pragma once
// The hardware and model catalogs: YAML data files under <data>/hardware/catalog/{accelerators,
// fabrics,nics,pcie,storage}/ and <data>/models/catalog/, one entry per file, id = file stem.
// Every number in them is a {value, source} pair; loading checks that each has a source.
// <data> is $FATHOM_DATA_DIR if set, else the source tree fathom was built from.
#include <map>
#include <string>

#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "scenarios/yaml_node.h"

namespace fathom::scenarios {

std::string data_dir();

class Catalog {
public:
    // Loads every catalog file under `root`; a malformed file throws InputError naming it.
    explicit Catalog(const std::string& root = data_dir());

    const hardware::AcceleratorSpec& accelerator(const std::string& id) const;
    const hardware::ScaleUpSpec& fabric(const std::string& id) const;
    const hardware::NicSpec& nic(const std::string& id) const;
    const hardware::PcieSpec& pcie(const std::string& id) const;
    const hardware::SsdSpec& ssd(const std::string& id) const;
    const models::ModelSpec& model(const std::string& id) const;

    const std::map<std::string, hardware::AcceleratorSpec>& accelerators() const { return accelerators_; }
    const std::map<std::string, hardware::ScaleUpSpec>& fabrics() const { return fabrics_; }
    const std::map<std::string, hardware::NicSpec>& nics() const { return nics_; }
    const std::map<std::string, hardware::PcieSpec>& pcies() const { return pcie_; }
    const std::map<std::string, hardware::SsdSpec>& ssds() const { return ssds_; }
    const std::map<std::string, models::ModelSpec>& models() const { return models_; }

private:
    std::map<std::string, hardware::AcceleratorSpec> accelerators_;
    std::map<std::string, hardware::ScaleUpSpec> fabrics_;
    std::map<std::string, hardware::NicSpec> nics_;
    std::map<std::string, hardware::PcieSpec> pcie_;
    std::map<std::string, hardware::SsdSpec> ssds_;
    std::map<std::string, models::ModelSpec> models_;
};

// Parses a model mapping (catalog file or a scenario's inline model). `catalog_file` true
// requires the catalog-only keys (kind, id, source).
models::ModelSpec parse_model(const Node& n, bool catalog_file);

}  // namespace fathom::scenarios
