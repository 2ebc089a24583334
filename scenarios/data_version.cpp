#include "scenarios/data_version.h"

#include "plans/catalog.h"
#include "sim/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fathom::scenarios {
namespace fs = std::filesystem;

const std::vector<std::string>& catalog_dirs() {
    // The directories of load_catalog (scenarios/catalog.cpp), in its order.
    static const std::vector<std::string> dirs = {
        "hardware/catalog/accelerators",
        "hardware/catalog/fabrics",
        "hardware/catalog/nics",
        "hardware/catalog/pcie",
        "hardware/catalog/storage",
        "hardware/catalog/filesystems",
        "hardware/catalog/reliability",
        "models/catalog",
        "workloads/stacks",
        "workloads/engines",
        "workloads/datasets",
        "workloads/acceptance",
        "workloads/checkpoint_writers",
    };
    return dirs;
}

uint64_t fnv1a(const std::string& bytes, uint64_t h) {
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string fingerprint_text(uint64_t h) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(h >> 16));
    return buf;
}

namespace {

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw sim::InputError("cannot read '" + p.string() + "'");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The latest "date" of metadata.json and of its campaign_* blocks (ISO 8601 strings sort by time).
std::string campaign_date(const fs::path& metadata) {
    if (!fs::is_regular_file(metadata)) return "";
    const auto j = nlohmann::json::parse(read_all(metadata), nullptr, false);
    if (!j.is_object()) throw sim::InputError("not a JSON object", metadata.string());
    std::string latest;
    auto take = [&latest](const nlohmann::json& o) {
        if (o.is_object() && o.contains("date") && o["date"].is_string())
            latest = std::max(latest, o["date"].get<std::string>());
    };
    take(j);
    for (const auto& [key, value] : j.items())
        if (key.rfind("campaign", 0) == 0) take(value);
    return latest.substr(0, 10);
}

}  // namespace

DataVersion data_version(const plans::Catalog& catalog, const std::string& root) {
    DataVersion v;
    v.root = root;
    std::vector<std::string> files;
    for (const std::string& d : catalog_dirs()) {
        const fs::path dir = fs::path(root) / d;
        if (!fs::is_directory(dir)) continue;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file() && e.path().extension() == ".yaml")
                files.push_back(d + "/" + e.path().filename().string());
    }
    if (fs::is_regular_file(fs::path(root) / "scenarios" / "intervals.yaml"))
        files.push_back("scenarios/intervals.yaml");
    std::sort(files.begin(), files.end());
    uint64_t h = fnv1a("");
    for (const std::string& f : files) {
        h = fnv1a(f + '\0', h);
        h = fnv1a(read_all(fs::path(root) / f) + '\0', h);
    }
    v.catalog = fingerprint_text(h);
    v.catalog_files = files.size();
    for (const auto& [id, a] : catalog.accelerators()) {
        if (a.calibration_table.empty()) continue;
        const fs::path table(a.calibration_table);  // already under the data root (load_catalog)
        std::string shown = table.lexically_relative(root).string();
        if (shown.empty() || shown.rfind("..", 0) == 0) shown = table.string();
        v.calibration.push_back({id, shown, fingerprint_text(fnv1a(read_all(table))),
                                 campaign_date(table.parent_path() / "metadata.json")});
    }
    return v;
}

}  // namespace fathom::scenarios
