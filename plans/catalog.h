#pragma once
// The catalogs as data: accelerators, scale-up fabrics, NICs, PCIe links, SSDs, shared file
// systems, failure-rate profiles, models,
// software-stack presets and checkpoint writers, by id. Filled once by scenarios::load_catalog (from the YAML files
// under hardware/catalog/, models/catalog/ and workloads/stacks/, every number with its source) and shared read-only by
// every evaluation (plans/context.h).
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "plans/intervals.h"
#include "plans/keys.h"
#include "workloads/lengths/length_distribution.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fathom::plans {

// A named software stack (workloads/stacks/<id>.yaml, training) or serving engine
// (workloads/engines/<id>.yaml): values of plan keys, each with its source.
// `stack.*` keys set the stack; other keys (training.zero_stage, parallel.sequence_parallel) are
// the framework's defaults, used where a scenario or a measured case does not say.
struct StackPreset {
    struct Setting {
        std::string key;  // a training-plan key path
        KeyValue value;
        std::string source;
    };
    std::string id;
    std::string name;
    std::vector<std::string> frameworks;  // measured-format framework (or serving engine) names it stands for
    std::vector<Setting> settings;
    // Serving engines: the engine versions the preset stands for, [from, before) (dotted numbers as
    // engine_version gives them; empty: unbounded), and where that range comes from.
    std::string versions_from, versions_before, versions_source;
    // Serving engines: settings that replace `settings` on a smaller device, as the engine picks its
    // defaults from the GPU it starts on (vLLM: under 70 GiB, or an A100, a smaller token budget).
    // A device is small when its memory is below `memory_below` or its name contains one of
    // `names` (case-insensitive); `source` says where the rule comes from.
    struct DeviceRule {
        double memory_below = 0;  // bytes
        std::vector<std::string> names;
        std::string source;
        std::vector<Setting> settings;
    };
    std::optional<DeviceRule> small_device;

    // Applies every setting to `plan` (a plan with its defaults, before the scenario's own keys).
    void apply(workloads::TrainingPlan& plan) const;
    // Serving engines: sets serving keys (the scenario's own keys are read afterwards).
    void apply(workloads::serving::ServingPlan& plan) const;
    // Serving engines: whether `device` is small by small_device's rule (false without one).
    bool is_small(const hardware::AcceleratorSpec& device) const;
    // Serving engines on a small device: sets small_device's keys that are not in `given` (the
    // scenario's own keys, which stay).
    void apply_small_device(workloads::serving::ServingPlan& plan, const std::set<std::string>& given) const;
};

// Engine versions as their dotted numbers ("~1.0" and "v0.6.1" read as 1.0 and 0.6.1): -1, 0 or 1
// as `a` is older than, the same as or newer than `b`; nullopt when either has no digits.
std::optional<int> compare_engine_versions(const std::string& a, const std::string& b);

// A serving benchmark dataset as request lengths (workloads/datasets/<id>.yaml): the empirical
// distributions of its prompt and output tokens, drawn independently, with the table they come from.
// A checkpoint writer (workloads/checkpoint_writers/<id>.yaml): the software that turns each rank's
// share of a checkpoint into file writes, and how fast one rank does that at most (serialization
// and its file stream), whatever the tier could take.
struct CheckpointWriterSpec {
    std::string id, name;
    double rank_rate = 0;  // bytes/s one rank writes at most
};

// Speculative decoding's measured acceptance by draft position for one drafter, target and dataset
// (workloads/acceptance/<id>.yaml): positions[i] is the share of verifications that accepted the
// draft at position i (vLLM's per-position acceptance rate: it counts the positions before it, so
// the values do not rise).
struct AcceptanceProfileSpec {
    std::string id, name, target, method, dataset, source;
    std::vector<double> positions;
};

struct DatasetSpec {
    std::string id, name, source;
    int64_t requests = 0;  // rows of the table the distributions were made from
    workloads::LengthDistribution prompt, output;
};

class Catalog {
public:
    const hardware::AcceleratorSpec& accelerator(const std::string& id) const;
    const hardware::ScaleUpSpec& fabric(const std::string& id) const;
    const hardware::NicSpec& nic(const std::string& id) const;
    const hardware::PcieSpec& pcie(const std::string& id) const;
    const hardware::SsdSpec& ssd(const std::string& id) const;
    const hardware::FileSystemSpec& filesystem(const std::string& id) const;
    const hardware::FailureRatesSpec& failure_rates(const std::string& id) const;
    const models::ModelSpec& model(const std::string& id) const;
    const StackPreset& stack(const std::string& id) const;
    const StackPreset& engine(const std::string& id) const;
    const DatasetSpec& dataset(const std::string& id) const;
    const CheckpointWriterSpec& checkpoint_writer(const std::string& id) const;
    const AcceptanceProfileSpec& acceptance_profile(const std::string& id) const;
    // The engine preset standing for a measured-format engine name, or null: the one whose versions
    // hold `version`, or (no version, or one that is not a dotted number) the newest, whose range
    // has no upper end; null also when no preset of the engine holds that version.
    const StackPreset* engine_for(const std::string& engine, const std::string& version = "") const;
    // The preset standing for a measured-format framework name, or null.
    const StackPreset* stack_for_framework(const std::string& framework) const;

    std::map<std::string, hardware::AcceleratorSpec>& accelerators() { return accelerators_; }
    std::map<std::string, hardware::ScaleUpSpec>& fabrics() { return fabrics_; }
    std::map<std::string, hardware::NicSpec>& nics() { return nics_; }
    std::map<std::string, hardware::PcieSpec>& pcies() { return pcie_; }
    std::map<std::string, hardware::SsdSpec>& ssds() { return ssds_; }
    std::map<std::string, hardware::FileSystemSpec>& filesystems() { return filesystems_; }
    std::map<std::string, hardware::FailureRatesSpec>& failure_rates() { return failure_rates_; }
    std::map<std::string, models::ModelSpec>& models() { return models_; }
    std::map<std::string, StackPreset>& stacks() { return stacks_; }
    std::map<std::string, StackPreset>& engines() { return engines_; }
    std::map<std::string, DatasetSpec>& datasets() { return datasets_; }
    std::map<std::string, CheckpointWriterSpec>& checkpoint_writers() { return writers_; }
    std::map<std::string, AcceptanceProfileSpec>& acceptance_profiles() { return acceptance_; }
    const std::map<std::string, hardware::AcceleratorSpec>& accelerators() const { return accelerators_; }
    const std::map<std::string, hardware::ScaleUpSpec>& fabrics() const { return fabrics_; }
    const std::map<std::string, hardware::NicSpec>& nics() const { return nics_; }
    const std::map<std::string, hardware::PcieSpec>& pcies() const { return pcie_; }
    const std::map<std::string, hardware::SsdSpec>& ssds() const { return ssds_; }
    const std::map<std::string, hardware::FileSystemSpec>& filesystems() const { return filesystems_; }
    const std::map<std::string, hardware::FailureRatesSpec>& failure_rates() const { return failure_rates_; }
    const std::map<std::string, models::ModelSpec>& models() const { return models_; }
    const std::map<std::string, StackPreset>& stacks() const { return stacks_; }
    const std::map<std::string, StackPreset>& engines() const { return engines_; }
    const std::map<std::string, DatasetSpec>& datasets() const { return datasets_; }
    const std::map<std::string, CheckpointWriterSpec>& checkpoint_writers() const { return writers_; }
    const std::map<std::string, AcceptanceProfileSpec>& acceptance_profiles() const { return acceptance_; }
    // The validation bands (scenarios/intervals.yaml; empty where the data directory has none).
    const IntervalTable& intervals() const { return intervals_; }
    IntervalTable& intervals() { return intervals_; }

private:
    std::map<std::string, hardware::AcceleratorSpec> accelerators_;
    std::map<std::string, hardware::ScaleUpSpec> fabrics_;
    std::map<std::string, hardware::NicSpec> nics_;
    std::map<std::string, hardware::PcieSpec> pcie_;
    std::map<std::string, hardware::SsdSpec> ssds_;
    std::map<std::string, hardware::FileSystemSpec> filesystems_;
    std::map<std::string, hardware::FailureRatesSpec> failure_rates_;
    std::map<std::string, models::ModelSpec> models_;
    std::map<std::string, StackPreset> stacks_;
    std::map<std::string, StackPreset> engines_;
    std::map<std::string, DatasetSpec> datasets_;
    std::map<std::string, CheckpointWriterSpec> writers_;
    std::map<std::string, AcceptanceProfileSpec> acceptance_;
    IntervalTable intervals_;
};

}  // namespace fathom::plans
