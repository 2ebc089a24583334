#pragma once
// The field names of measured-format v1 (shared/reference/measured-format.md; the schema of its
// checker, check_measured.py): every key of a case must be one of them, and an other_metrics
// entry's `variant` may change only configuration fields (under cluster, model, training,
// serving, benchmark or precision). Names only: the readers check the values they use.
#include <yaml-cpp/yaml.h>

#include <string>

namespace fathom::scenarios {

// InputError (`file`, the key's line, its dotted path) for the first key of the case that the
// format does not define; a `variant` key that is not a configuration field's path, or that
// names a block rather than a field, is one too.
void check_case_fields(const YAML::Node& c, const std::string& file);

// The case with `path` (a configuration field's dotted path, checked above) set to `value`,
// creating the blocks on the way.
void set_field(YAML::Node& c, const std::string& path, const YAML::Node& value);

}  // namespace fathom::scenarios
