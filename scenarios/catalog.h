#pragma once
// Loads the catalogs (plans/catalog.h) from YAML data files: <data>/hardware/catalog/{accelerators,
// fabrics,nics,pcie,storage}/, <data>/models/catalog/ and <data>/workloads/stacks/, one entry per
// file, id = file stem. Every number in them is a {value, source} pair; loading checks that each
// has a source. <data> is $FATHOM_DATA_DIR if set, else the source tree fathom was built from.
#include "models/llm/model_spec.h"
#include "plans/catalog.h"
#include "scenarios/yaml_node.h"

#include <memory>
#include <string>
#include <vector>

namespace fathom::scenarios {

std::string data_dir();

// The catalog-style files of a directory: its *.yaml files, sorted (none when there is no such
// directory).
std::vector<std::string> yaml_files(const std::string& dir);
// A catalog file's header: InputError unless it has `kind: <kind>` and its id is the file's stem.
void check_header(const Node& n, const char* kind, const std::string& file);

// Loads every catalog file under `root`; a malformed file throws InputError naming it.
std::shared_ptr<const plans::Catalog> load_catalog(const std::string& root = data_dir());

// Parses a model mapping (catalog file or a scenario's inline model) with the `model.*` keys of
// plans/keys.h. `catalog_file` true also requires the catalog-only keys (kind, id, source).
models::ModelSpec parse_model(const Node& n, bool catalog_file);
// A speculative-acceptance file (workloads/acceptance/<id>.yaml; scenarios/acceptance_profile.cpp).
plans::AcceptanceProfileSpec parse_acceptance_profile(const Node& n);

}  // namespace fathom::scenarios
