#pragma once
// The field names of measured-format v1 (shared/reference/measured-format.md; the schema of its
// checker, check_measured.py): every key of a case must be one of them, and an other_metrics
// entry's `variant` may change only configuration fields (under cluster, model, training,
// serving, benchmark or precision). Names, and which names are configuration fields (a translator
// reads each or reports it as stated but not modelled): the translators check the values they use.
#include "scenarios/yaml_node.h"

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

namespace fathom::scenarios {

// InputError (`file`, the key's line, its dotted path) for the first key of the case that the
// format does not define; a `variant` key that is not a configuration field's path, or that
// names a block rather than a field, is one too.
void check_case_fields(const YAML::Node& c, const std::string& file);

// A copy of case `c` with `path` (a configuration field's dotted path, checked above) set to the
// node `value` itself (so that it keeps its line), creating the blocks on the way. Every other node
// is shared with `c`, which stays unchanged (the mappings on the path are the copy's own). An empty
// path: a copy of the top mapping.
YAML::Node with_field(const YAML::Node& c, const std::string& path, const YAML::Node& value,
                      NodeArena* arena = nullptr);
// `c` becomes with_field(c, path, value).
void set_field(YAML::Node& c, const std::string& path, const YAML::Node& value);

// The configuration fields that case `c` states (the dotted paths of its leaves that are settings
// or qualifiers of its measurement, not provenance, free text or informational figures) and that
// are not in `read`: the case's fields stated by the source but not modelled.
std::vector<std::string> not_read_fields(const YAML::Node& c, const std::set<std::string>& read);
// Every configuration field the format defines, by dotted path.
std::vector<std::string> configuration_fields();

// fathom's extension of the format (scenarios/measured-format-fathom.md): the vocabulary of one of
// the serving fields it adds with a fixed vocabulary (moe_dispatcher, packaging).
const std::vector<std::string>& serving_extension_choices(const std::string& field);

}  // namespace fathom::scenarios
