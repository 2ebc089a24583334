#pragma once
// JSON as the Python tools write it (json.dump): what the importers of JSON results share.
#include "scenarios/imports/imports.h"

#include <nlohmann/json.hpp>

#include <string>

namespace fathom::scenarios::imports {

// `text` (of `file`, starting at its line `first_line`) parsed; Python's bare Infinity read as the
// string "inf" and NaN as null (outside strings only); an input error naming the line of the fault.
nlohmann::json parse_json(const Source& file, const std::string& text, int first_line);

}  // namespace fathom::scenarios::imports
