// The data version `fathom --version` prints (scenarios/data_version.h): the catalog's fingerprint
// moves with any catalog file and only with catalog files; each measured table has its own, and its
// campaign date is the latest one its metadata records.
#include "scenarios/data_version.h"

#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace fathom;
using testing::catalog_copy_with;
using testing::kSource;

namespace {

scenarios::DataVersion version_of(const std::string& root) {
    return scenarios::data_version(*scenarios::load_catalog(root), root);
}

const scenarios::CalibrationSetVersion& set_of(const scenarios::DataVersion& v, const std::string& device) {
    for (const auto& c : v.calibration)
        if (c.device == device) return c;
    FAIL("no calibration set for " << device);
    throw;
}

}  // namespace

TEST_CASE("FNV-1a 64 of known strings", "[scenarios]") {
    // The FNV reference values (Fowler, Noll, Vo): offset basis for "", 0xaf63dc4c8601ec8c for "a".
    CHECK(scenarios::fnv1a("") == 0xcbf29ce484222325ull);
    CHECK(scenarios::fnv1a("a") == 0xaf63dc4c8601ec8cull);
    CHECK(scenarios::fingerprint_text(0xaf63dc4c8601ec8cull) == "af63dc4c8601");  // the top 48 bits
}

TEST_CASE("every directory the fingerprint reads exists in the source tree", "[scenarios]") {
    for (const std::string& d : scenarios::catalog_dirs()) {
        INFO(d);
        CHECK(std::filesystem::is_directory(std::filesystem::path(kSource) / d));
    }
    const auto v = version_of(kSource);
    CHECK(v.catalog.size() == 12);
    CHECK(v.catalog_files > 50);
    CHECK(set_of(v, "h100-sxm-80gb").table == "hardware/calibration/h100-sxm-80gb/table.yaml");
    CHECK(set_of(v, "h100-sxm-80gb").date.size() == 10);  // YYYY-MM-DD
}

TEST_CASE("the catalog fingerprint moves with a catalog file, a table's with its table", "[scenarios]") {
    const auto same = version_of(catalog_copy_with("fathom_dv_same", "hardware/catalog/accelerators/h100-sxm-80gb.yaml",
                                                   "kind: accelerator", "kind: accelerator"));
    const auto again =
        version_of(catalog_copy_with("fathom_dv_again", "hardware/catalog/accelerators/h100-sxm-80gb.yaml",
                                     "kind: accelerator", "kind: accelerator"));
    CHECK(same.catalog == again.catalog);  // a function of the files' contents, not of where they lie
    CHECK(set_of(same, "h100-sxm-80gb").fingerprint == set_of(again, "h100-sxm-80gb").fingerprint);

    const auto edited =
        version_of(catalog_copy_with("fathom_dv_edit", "hardware/catalog/accelerators/h100-sxm-80gb.yaml",
                                     "kind: accelerator", "kind: accelerator  # edited"));
    CHECK(edited.catalog != same.catalog);
    CHECK(set_of(edited, "h100-sxm-80gb").fingerprint == set_of(same, "h100-sxm-80gb").fingerprint);

    const auto table = version_of(catalog_copy_with("fathom_dv_table", "hardware/calibration/h100-sxm-80gb/table.yaml",
                                                    "kind: calibration_table", "kind: calibration_table  # edited"));
    CHECK(table.catalog == same.catalog);  // a table is not a catalog file
    CHECK(set_of(table, "h100-sxm-80gb").fingerprint != set_of(same, "h100-sxm-80gb").fingerprint);
    CHECK(set_of(table, "h200-sxm-141gb").fingerprint == set_of(same, "h200-sxm-141gb").fingerprint);
}

TEST_CASE("a calibration set's date is its latest campaign's", "[scenarios]") {
    const auto v = version_of(catalog_copy_with("fathom_dv_date", "hardware/calibration/h100-sxm-80gb/metadata.json",
                                                "\"gpu\": \"NVIDIA H100 80GB HBM3\",",
                                                "\"gpu\": \"NVIDIA H100 80GB HBM3\", \"campaign_2099\": {\"date\": "
                                                "\"2099-01-02T03:04:05Z\"},"));
    CHECK(set_of(v, "h100-sxm-80gb").date == "2099-01-02");
    const std::string broken =
        catalog_copy_with("fathom_dv_broken", "hardware/calibration/h100-sxm-80gb/metadata.json", "{", "[");
    CHECK_THROWS_AS(version_of(broken), sim::InputError);
}
