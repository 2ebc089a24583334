// `fathom list`: catalog entries and registered algorithms.
#include "hardware/collectives/collective.h"
#include "hardware/routing/routing.h"
#include "hardware/topology/builders.h"
#include "plans/keys.h"
#include "scenarios/catalog.h"
#include "scenarios/source_supplement.h"
#include "tools/cli/cli.h"
#include "tools/cli/commands.h"
#include "workloads/serving/autoscale.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/router.h"
#include "workloads/training/schedules/pipeline_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace fathom::cli {

namespace {

void print_hardware(const plans::Catalog& catalog) {
    std::cout << "accelerators:\n";
    for (const auto& [id, x] : catalog.accelerators())
        std::printf("  %-22s %-36s bf16 %6.0f TFLOP/s  %5.0f GB  %5.2f TB/s\n", id.c_str(), x.name.c_str(),
                    x.peak(hardware::Dtype::bf16) / 1e12, x.memory_capacity / 1e9, x.memory_bandwidth / 1e12);
    std::cout << "scale-up fabrics:\n";
    for (const auto& [id, x] : catalog.fabrics())
        std::printf("  %-22s %-44s %5.0f GB/s per GPU\n", id.c_str(), x.name.c_str(), x.bandwidth_per_gpu / 1e9);
    std::cout << "NICs:\n";
    for (const auto& [id, x] : catalog.nics())
        std::printf("  %-22s %-44s %5.0f GB/s\n", id.c_str(), x.name.c_str(), x.bandwidth / 1e9);
    std::cout << "PCIe:\n";
    for (const auto& [id, x] : catalog.pcies()) std::printf("  %-22s %s\n", id.c_str(), x.name.c_str());
    std::cout << "SSDs:\n";
    for (const auto& [id, x] : catalog.ssds()) std::printf("  %-22s %s\n", id.c_str(), x.name.c_str());
    std::cout << "file systems (cluster.storage):\n";
    for (const auto& [id, x] : catalog.filesystems())
        std::printf("  %-22s %-44s %6.0f GB/s write\n", id.c_str(), x.name.c_str(), x.write_bandwidth / 1e9);
    std::cout << "failure rates (run.failures):\n";
    for (const auto& [id, x] : catalog.failure_rates()) {
        double count = 0;
        for (const auto& c : x.causes) count += c.count;
        std::printf("  %-22s %-44s %5.1f per 1M GPU-hours\n", id.c_str(), x.name.c_str(),
                    count / x.exposure_gpu_hours * 1e6);
    }
}

void print_models(const plans::Catalog& catalog) {
    std::cout << "models:\n";
    for (const auto& [id, m] : catalog.models())
        std::printf("  %-18s %-34s %4lld layers  hidden %6lld  %6.1fB params\n", id.c_str(), m.name.c_str(),
                    static_cast<long long>(m.layers), static_cast<long long>(m.hidden),
                    m.total_params(m.max_seq_len > 0 ? m.max_seq_len : 2048) / 1e9);
}

// Stack or engine presets: id, name, and the keys each sets.
template <typename Presets>
void print_presets(const char* title, const Presets& presets) {
    std::cout << title << ":\n";
    for (const auto& [id, x] : presets) {
        std::string keys;
        for (const auto& setting : x.settings)
            keys += (keys.empty() ? "" : ", ") + setting.key + "=" + plans::format_value(setting.value);
        std::string versions;
        if (!x.versions_from.empty() || !x.versions_before.empty())
            versions = " [versions " + (x.versions_from.empty() ? std::string("any") : x.versions_from) + " to " +
                       (x.versions_before.empty() ? std::string("newest") : "before " + x.versions_before) + "]";
        std::printf("  %-18s %s%s\n  %-18s %s\n", id.c_str(), x.name.c_str(), versions.c_str(), "", keys.c_str());
    }
}

void print_sources() {
    std::cout << "source supplements (scenarios/sources/: what a measurement's source states outside its table, "
                 "filled in by `fathom compare`):\n";
    for (const auto& s : scenarios::load_source_supplements(scenarios::data_dir() + "/scenarios/sources")) {
        std::vector<std::string> fields;
        for (const auto& r : s.runs)
            for (const auto& kv : r.fields)
                if (std::find(fields.begin(), fields.end(), r.section + "." + kv.first.Scalar()) == fields.end())
                    fields.push_back(r.section + "." + kv.first.Scalar());
        std::string keys;
        for (const auto& f : fields) keys += (keys.empty() ? "" : ", ") + f;
        std::printf("  %-24s %s\n  %-24s cases citing \"%s\", %s: %zu runs (%s)\n", s.id.c_str(), s.name.c_str(), "",
                    s.cites.c_str(), s.table.empty() ? "any table" : s.table.c_str(), s.runs.size(), keys.c_str());
    }
}

// A registry of named parts (sim/registry.h): one line per entry.
template <typename Registry>
void print_registry(const char* title, const Registry& registry) {
    std::cout << title << ":\n";
    for (const auto& e : registry.entries()) std::printf("  %-18s %s\n", e.name.c_str(), e.description.c_str());
}

struct Category {
    const char* name;
    std::function<void(const plans::Catalog&)> print;
};

// Declarative table: every category of `fathom list`, in the order `fathom list` prints them.
const std::vector<Category>& categories() {
    using C = const plans::Catalog&;
    static const std::vector<Category> all = {
        {"hardware", print_hardware},
        {"models", print_models},
        {"stacks", [](C c) { print_presets("software-stack presets (scenario key `stack`)", c.stacks()); }},
        {"engines", [](C c) { print_presets("serving-engine presets (scenario key `serving.engine`)", c.engines()); }},
        {"sources", [](C) { print_sources(); }},
        {"datasets",
         [](C c) {
             std::cout << "serving datasets (traffic.dataset: prompt and output lengths, drawn independently):\n";
             for (const auto& [id, d] : c.datasets())
                 std::printf("  %-22s %s: %lld requests, prompt mean %.0f, output mean %.0f tokens\n  %-22s %s\n",
                             id.c_str(), d.name.c_str(), static_cast<long long>(d.requests), d.prompt.expected(),
                             d.output.expected(), "", d.source.c_str());
         }},
        {"writers",
         [](C c) {
             std::cout << "checkpoint writers (run.checkpoint_writer):\n";
             for (const auto& [id, w] : c.checkpoint_writers())
                 std::printf("  %-22s %-44s %6.2f GB/s a rank\n", id.c_str(), w.name.c_str(), w.rank_rate / 1e9);
         }},
        {"acceptance",
         [](C c) {
             std::cout << "speculative acceptance profiles (serving.speculative.acceptance_profile):\n";
             for (const auto& [id, a] : c.acceptance_profiles()) {
                 std::string rates;
                 for (double x : a.positions) rates += (rates.empty() ? "" : " ") + sim::short_number(x);
                 std::printf("  %-22s %-60s %s\n", id.c_str(), a.name.c_str(), rates.c_str());
             }
         }},
        {"policies",
         [](C) { print_registry("batching policies (serving.policy)", workloads::serving::policy_registry()); }},
        {"routers", [](C) { print_registry("routers (serving.router)", workloads::serving::router_registry()); }},
        {"autoscalers",
         [](C) {
             print_registry("autoscaling policies (serving.autoscale.policy)",
                            workloads::serving::autoscale_policy_registry());
         }},
        {"schedules", [](C) { print_registry("pipeline schedules", workloads::schedule_registry()); }},
        {"collectives", [](C) { print_registry("collective algorithms", hardware::collective_registry()); }},
        {"topologies",
         [](C) {
             print_registry("topology builders (fabric topology; cluster.scale_out.topology)",
                            hardware::topology_registry());
         }},
        {"routing",
         [](C) { print_registry("routing strategies (cluster.scale_out.routing)", hardware::routing_registry()); }},
    };
    return all;
}

}  // namespace

std::vector<std::string> list_categories() {
    std::vector<std::string> out;
    for (const Category& c : categories()) out.push_back(c.name);
    out.push_back("keys");
    return out;
}

int cmd_list(const Args& a) {
    const std::string what = a.positional.empty() ? "all" : a.positional.front();
    if (what == "keys") {
        std::cout << plans::key_reference_markdown();
        return 0;
    }
    std::string valid;
    bool known = what == "all";
    for (const Category& c : categories()) {
        valid += std::string(c.name) + ", ";
        known = known || what == c.name;
    }
    if (!known) throw sim::InputError("list: unknown category '" + what + "'; valid: " + valid + "keys");
    const auto catalog = scenarios::load_catalog();
    for (const Category& c : categories())
        if (what == "all" || what == c.name) c.print(*catalog);
    return 0;
}

}  // namespace fathom::cli
