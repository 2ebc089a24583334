#pragma once
// Internal to scenarios/: presets of plan keys as the catalog files give them (training stacks under
// workloads/stacks/, serving engines under workloads/engines/), each setting with its source.
#include "plans/catalog.h"
#include "plans/keys.h"
#include "scenarios/schema.h"
#include "scenarios/yaml_node.h"
#include "sim/units.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace fathom::scenarios::preset {

// A preset's `settings`: plan keys of `keys`, each {value, source}.
template <typename Plan>
std::vector<plans::StackPreset::Setting> parse_settings(const Node& settings, const std::vector<plans::Key<Plan>>& keys,
                                                        const char* what) {
    std::vector<plans::StackPreset::Setting> out;
    for (const std::string& key : settings.keys()) {
        const plans::KeyInfo* info = nullptr;
        for (const auto& k : keys)
            if (k.info.path == key) info = &k.info;
        if (!info) settings.fail(key, what);
        const Node entry = settings.child(key);
        entry.allow_only({"value", "source"});
        if (entry.str("source").empty()) entry.fail("source", "empty source");
        plans::KeyInfo as_value = *info;
        as_value.path = "value";  // read_value reads the entry's `value`
        out.push_back({key, read_value(entry, as_value), entry.str("source")});
    }
    return out;
}

// A preset of plan keys: training stacks (keys of training_plan_keys, listed under `frameworks`) or
// serving engines (keys of serving_plan_keys, listed under `engines`).
template <typename Plan>
plans::StackPreset parse_preset(const Node& n, const std::vector<plans::Key<Plan>>& keys, const char* names_key,
                                const char* what) {
    n.allow_only({"kind", "id", "name", names_key, "versions", "settings", "small_device"});
    plans::StackPreset p;
    p.id = n.str("id");
    p.name = n.str("name");
    if (auto f = n.find(names_key))
        for (const auto& item : f->items()) p.frameworks.push_back(item.scalar());
    if (auto v = n.find("versions")) {
        // The engine versions the preset stands for: [from, before), with the source of the bounds.
        v->allow_only({"from", "before", "source"});
        if (v->has("from")) p.versions_from = v->str("from");
        if (v->has("before")) p.versions_before = v->str("before");
        p.versions_source = v->str("source");
        if (p.versions_source.empty()) v->fail("source", "empty source");
        if (p.versions_from.empty() && p.versions_before.empty()) v->fail("", "expected from, before or both");
        for (const std::string* b : {&p.versions_from, &p.versions_before})
            if (!b->empty() && !std::isdigit(static_cast<unsigned char>((*b)[0])))
                v->fail(b == &p.versions_from ? "from" : "before", "expected a dotted version number (0.8)");
    }
    p.settings = parse_settings(n.child("settings"), keys, what);
    if (auto small = n.find("small_device")) {
        // Serving engines' defaults for a smaller GPU (plans::StackPreset::DeviceRule).
        small->allow_only({"memory_below", "names", "source", "settings"});
        plans::StackPreset::DeviceRule rule;
        rule.memory_below = small->quantity("memory_below", sim::Dimension::Bytes);
        if (!(rule.memory_below > 0)) small->fail("memory_below", "must be positive");
        if (auto names = small->find("names"))
            for (const auto& item : names->items()) {
                std::string name = item.scalar();
                std::transform(name.begin(), name.end(), name.begin(),
                               [](unsigned char ch) { return std::tolower(ch); });
                rule.names.push_back(name);
            }
        rule.source = small->str("source");
        if (rule.source.empty()) small->fail("source", "empty source");
        rule.settings = parse_settings(small->child("settings"), keys, what);
        p.small_device = std::move(rule);
    }
    return p;
}

}  // namespace fathom::scenarios::preset
