#include "plans/catalog.h"

#include "sim/error.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace fathom::plans {
namespace {

template <typename T>
const T& lookup(const std::map<std::string, T>& m, const std::string& id, const char* what) {
    auto it = m.find(id);
    if (it != m.end()) return it->second;
    std::string names;
    for (const auto& [k, v] : m) names += (names.empty() ? "" : ", ") + k;
    throw sim::InputError(std::string("unknown ") + what + " '" + id + "'; known: " + names);
}

}  // namespace

void StackPreset::apply(workloads::TrainingPlan& plan) const {
    for (const auto& s : settings) set_training_key(plan, s.key, s.value);
    plan.stack_preset = id;
}

void StackPreset::apply(workloads::serving::ServingPlan& plan) const {
    for (const auto& s : settings) set_serving_key(plan, s.key, s.value);
    plan.engine.preset = id;
}

bool StackPreset::is_small(const hardware::AcceleratorSpec& device) const {
    if (!small_device) return false;
    if (device.memory_capacity < small_device->memory_below) return true;
    std::string device_name = device.name + " " + device.id;
    std::transform(device_name.begin(), device_name.end(), device_name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return std::any_of(small_device->names.begin(), small_device->names.end(),
                       [&](const std::string& n) { return device_name.find(n) != std::string::npos; });
}

void StackPreset::apply_small_device(workloads::serving::ServingPlan& plan, const std::set<std::string>& given) const {
    if (!small_device) return;
    for (const auto& s : small_device->settings)
        if (!given.count(s.key)) set_serving_key(plan, s.key, s.value);
}

const StackPreset& Catalog::engine(const std::string& id) const { return lookup(engines_, id, "serving engine"); }
const DatasetSpec& Catalog::dataset(const std::string& id) const { return lookup(datasets_, id, "dataset"); }

namespace {

// A version as its dotted numbers ("~1.0" and "v0.6.1" read as 1.0 and 0.6.1); none without digits.
std::optional<std::vector<int>> parse_version(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i]))) ++i;  // "~1.0", "v0.6.1"
    if (i == text.size()) return std::nullopt;
    std::vector<int> parts;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        int v = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && v < 100000)
            v = v * 10 + (text[i++] - '0');
        parts.push_back(v);
        if (i + 1 < text.size() && text[i] == '.' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
        else break;
    }
    return parts;
}

int compare_versions(const std::vector<int>& a, const std::vector<int>& b) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        const int x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

}  // namespace

std::optional<int> compare_engine_versions(const std::string& a, const std::string& b) {
    const auto x = parse_version(a), y = parse_version(b);
    if (!x || !y) return std::nullopt;
    return compare_versions(*x, *y);
}

const StackPreset* Catalog::engine_for(const std::string& engine, const std::string& version) const {
    const auto v = parse_version(version);
    for (const auto& [id, s] : engines_) {
        if (id != engine && std::find(s.frameworks.begin(), s.frameworks.end(), engine) == s.frameworks.end()) continue;
        if (!v) {
            if (s.versions_before.empty()) return &s;
            continue;
        }
        const auto from = parse_version(s.versions_from), before = parse_version(s.versions_before);
        if ((!from || compare_versions(*v, *from) >= 0) && (!before || compare_versions(*v, *before) < 0)) return &s;
    }
    return nullptr;
}

const hardware::AcceleratorSpec& Catalog::accelerator(const std::string& id) const {
    return lookup(accelerators_, id, "accelerator");
}
const hardware::ScaleUpSpec& Catalog::fabric(const std::string& id) const {
    return lookup(fabrics_, id, "scale-up fabric");
}
const hardware::NicSpec& Catalog::nic(const std::string& id) const { return lookup(nics_, id, "NIC"); }
const hardware::PcieSpec& Catalog::pcie(const std::string& id) const { return lookup(pcie_, id, "PCIe link"); }
const hardware::SsdSpec& Catalog::ssd(const std::string& id) const { return lookup(ssds_, id, "SSD"); }
const hardware::FileSystemSpec& Catalog::filesystem(const std::string& id) const {
    return lookup(filesystems_, id, "file system");
}
const hardware::FailureRatesSpec& Catalog::failure_rates(const std::string& id) const {
    return lookup(failure_rates_, id, "failure-rate profile");
}
const models::ModelSpec& Catalog::model(const std::string& id) const { return lookup(models_, id, "model"); }
const StackPreset& Catalog::stack(const std::string& id) const { return lookup(stacks_, id, "stack preset"); }
const CheckpointWriterSpec& Catalog::checkpoint_writer(const std::string& id) const {
    return lookup(writers_, id, "checkpoint writer");
}

const AcceptanceProfileSpec& Catalog::acceptance_profile(const std::string& id) const {
    return lookup(acceptance_, id, "acceptance profile");
}

const StackPreset* Catalog::stack_for_framework(const std::string& framework) const {
    for (const auto& [id, s] : stacks_)
        if (std::find(s.frameworks.begin(), s.frameworks.end(), framework) != s.frameworks.end()) return &s;
    return nullptr;
}

hardware::ClusterSpec build_cluster(const ClusterRequest& r, const Catalog& cat) {
    hardware::ClusterSpec c;
    c.accelerator = cat.accelerator(r.accelerator);
    c.nodes = r.nodes;
    c.gpus_per_node = r.gpus_per_node;
    c.scale_up = cat.fabric(r.scale_up.empty() ? c.accelerator.scale_up : r.scale_up);
    if (r.gpus_per_node > c.scale_up.max_domain_size)
        throw sim::InputError("gpus_per_node = " + std::to_string(r.gpus_per_node) + " exceeds the " +
                              std::to_string(c.scale_up.max_domain_size) + "-GPU domain of fabric '" + c.scale_up.id +
                              "'");
    c.nic = cat.nic(r.nic);
    c.nics_per_node = r.nics_per_node;
    c.topology = r.topology;
    c.oversubscription = r.oversubscription;
    c.nodes_per_leaf = r.nodes_per_leaf;
    c.routing = r.routing;
    c.network = r.network;
    c.pcie = cat.pcie(!r.pcie.empty()                    ? r.pcie
                      : !c.accelerator.host_link.empty() ? c.accelerator.host_link
                                                         : "pcie-gen5-x16");
    if (!r.ssd.empty()) c.ssd = cat.ssd(r.ssd);
    c.ssds_per_node = r.ssds_per_node;
    if (!r.storage.empty()) c.storage = cat.filesystem(r.storage);
    c.host_memory = r.host_memory;
    return c;
}

}  // namespace fathom::plans
