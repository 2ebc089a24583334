#pragma once
// Which data a prediction came from: a fingerprint of the catalog files (accelerators, fabrics,
// models, stack and engine presets, datasets, validation bands) and, for each accelerator with a
// measured cost table, that table's fingerprint and its campaign's date. `fathom --version` prints
// them, and two people comparing answers can tell whether they ran the same catalog.
#include <cstdint>
#include <string>
#include <vector>

namespace fathom::plans {
class Catalog;
}

namespace fathom::scenarios {

struct CalibrationSetVersion {
    std::string device;       // accelerator id
    std::string table;        // the table's path, relative to the data root
    std::string fingerprint;  // of the table file
    std::string date;         // the latest campaign date in metadata.json beside it, "" when none
};

struct DataVersion {
    std::string root;
    std::string catalog;  // fingerprint of every catalog file, in path order
    size_t catalog_files = 0;
    std::vector<CalibrationSetVersion> calibration;  // by device id
};

// The subdirectories of the data root that load_catalog reads (and scenarios/intervals.yaml).
const std::vector<std::string>& catalog_dirs();
// FNV-1a 64 of `bytes` continued from `h`; printed as 12 hex digits by fingerprint_text.
uint64_t fnv1a(const std::string& bytes, uint64_t h = 14695981039346656037ull);
std::string fingerprint_text(uint64_t h);
// The fingerprints of the catalog under `root` and the calibration tables `catalog` names. Reading
// a file fails as an InputError naming it.
DataVersion data_version(const plans::Catalog& catalog, const std::string& root);

}  // namespace fathom::scenarios
