#include "scenarios/overrides.h"

#include "sim/error.h"

#include <string>
#include <vector>

namespace fathom::scenarios {
namespace {

void apply_override(YAML::Node root, const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw sim::InputError("--set expects key=value (e.g. parallel.tp=8), got '" + assignment + "'");
    const std::string path = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    const std::vector<std::string> parts = split_key_path(path);
    std::vector<YAML::Node> chain{root};
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        YAML::Node next = chain.back()[parts[i]];
        if (!next.IsDefined() || next.IsNull()) {
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
        } else if (next.IsScalar() && (parts[i] == "prompt" || parts[i] == "output" || parts[i] == "documents")) {
            // `prompt: 512` becomes `prompt: {distribution: fixed, value: 512}` so a key can be added.
            const std::string v = next.Scalar();
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
            next["distribution"] = "fixed";
            next["value"] = v;
        } else if (next.IsScalar() && parts[i] == "stack") {
            // `stack: <preset>` becomes `stack: {preset: <preset>}` so a stack key can be added.
            const std::string preset = next.Scalar();
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
            next["preset"] = preset;
        }
        if (!next.IsMap()) throw sim::InputError("--set " + path + ": '" + parts[i] + "' is not a mapping");
        chain.push_back(next);
    }
    // Lists may be given inline: --set training.layers_per_stage=[16,16,15]
    YAML::Node parsed;
    try {
        parsed = YAML::Load(value);
    } catch (const YAML::Exception& e) {
        throw sim::InputError("--set " + path + ": malformed value '" + value + "': " + e.msg, "", 0, path);
    }
    if (!parsed.IsSequence()) {
        chain.back()[parts.back()] = YAML::Node(value);
        return;
    }
    // The list's values are rebuilt without the marks of the --set text: a line of it is no line
    // of the scenario file, which errors about them would otherwise name.
    YAML::Node list(YAML::NodeType::Sequence);
    for (YAML::const_iterator it = parsed.begin(); it != parsed.end(); ++it)
        list.push_back(it->IsScalar() ? YAML::Node(it->Scalar()) : YAML::Node(*it));
    chain.back()[parts.back()] = list;
}

}  // namespace

void apply_overrides(Node& root, const std::vector<std::string>& overrides) {
    for (const auto& o : overrides) {
        try {
            apply_override(root.raw(), o);
        } catch (const sim::InputError& e) {
            if (!e.file().empty()) throw;
            throw sim::InputError(e.bare_message(), root.file(), 0, e.key());
        }
    }
}

}  // namespace fathom::scenarios
