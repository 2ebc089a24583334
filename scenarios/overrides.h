#pragma once
// `--set key=value` on a loaded scenario (and the Python package's overrides): each assignment
// sets one dotted key, creating its sections; a list may be given inline ([16,16,15]). An error
// names the scenario the values apply to and the key.
#include "scenarios/yaml_node.h"

#include <string>
#include <vector>

namespace fathom::scenarios {

void apply_overrides(Node& root, const std::vector<std::string>& overrides);

}  // namespace fathom::scenarios
