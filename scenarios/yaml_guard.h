#pragma once
// A guard in front of yaml-cpp: libfyaml's event parser reads the text first and refuses what
// yaml-cpp reads wrongly or reports poorly, with the line and column and libfyaml's reason:
//  - syntax errors yaml-cpp accepts or misplaces (an unterminated quote ran to the end of the file
//    as one string and surfaced as "missing required key 'model'"; a flow list without its closing
//    bracket);
//  - text that is not UTF-8 (checked before libfyaml sees it: 0.7.12 loops for ever on such a byte
//    in a directive line);
//  - nesting deeper than kMaxYamlDepth (yaml-cpp recurses: 100,000 '[' ended in "bad file"), found
//    without recursion, at the collection that passes it.
// Why a guard and not a move: yaml-cpp's nodes are the document model of the scenario, measured,
// catalog and calibration readers (19 files); libfyaml (Debian's libfyaml-dev) streams events with
// positions at no depth cost, so it checks the text and yaml-cpp keeps building the nodes. Aliases
// are bounded after the load (yaml_node.cpp: check_size), where their expansion is known.
#include <string>

namespace fathom::scenarios {

constexpr int kMaxYamlDepth = 64;

// InputError naming `name`, the line and the column when `text` is not one well-formed YAML
// stream or nests deeper than kMaxYamlDepth.
void check_yaml_syntax(const std::string& text, const std::string& name);

}  // namespace fathom::scenarios
