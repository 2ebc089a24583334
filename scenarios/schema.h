#pragma once
// Reads the keys plans/keys.h declares from YAML: one value by its declared type and unit, checked
// against its range or choices, and whole sections (unknown keys rejected with a "did you mean"
// hint, or, when the key is declared in another section, where it belongs).
#include "plans/keys.h"
#include "scenarios/yaml_node.h"

#include <set>
#include <string>
#include <vector>

namespace fathom::scenarios {

// The value of key `k` in mapping `section` (which holds k.name()); InputError naming file, line
// and key when it is malformed, lacks its unit or falls outside the declared range or choices.
plans::KeyValue read_value(const Node& section, const plans::KeyInfo& k);

// Rejects keys of `section` (a mapping at `prefix`, e.g. "cluster.scale_out") other than the declared
// keys directly under `prefix` and `extra` (sub-mappings or structural keys).
void check_section_keys(const Node& section, const std::string& prefix, const std::vector<std::string>& extra = {});

// Reads every declared key under `prefix` present in `section` into `target`, recording the paths
// it set in `given` when not null; missing required keys fail, but for those in `derived` (paths
// another section derives, as an RL scenario derives the trainer's global batch).
template <typename T>
void read_section(const Node& section, const std::string& prefix, const std::vector<plans::Key<T>>& keys, T& target,
                  std::set<std::string>* given = nullptr, const std::set<std::string>* derived = nullptr) {
    for (const auto& key : keys) {
        if (key.info.section() != prefix) continue;
        const std::string name = key.info.name();
        if (!section.has(name)) {
            if (key.info.required && !(derived && derived->count(key.info.path)))
                section.fail("", "missing required key '" + name + "'");
            continue;
        }
        key.set(target, read_value(section, key.info));
        if (given) given->insert(key.info.path);
    }
}

}  // namespace fathom::scenarios
