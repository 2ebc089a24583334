#pragma once
// The import tests' fixtures (tests/data/import/): a file as the importers take it.
#include "scenarios/imports/imports.h"
#include "tests/support/fixtures.h"

#include <fstream>
#include <sstream>
#include <string>

namespace fathom::testing {

inline scenarios::imports::Source import_fixture(const std::string& name) {
    const std::string path = kSource + "/tests/data/import/" + name;
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return {path, s.str()};
}

}  // namespace fathom::testing
