// `fathom import FILE [--from TOOL] [--scenario SCENARIO.yaml] [-o MEASURED.yaml]`: a benchmark's
// result (vLLM, SGLang, GenAI-Perf, AIPerf), nccl-tests output or a training log (Megatron-LM, NeMo)
// as measured-format cases (scenarios/imports/), for
// `fathom compare` to check fathom against the user's own cluster. Printed, or written whole to -o.
#include "scenarios/catalog.h"
#include "scenarios/imports/imports.h"
#include "scenarios/scenario.h"
#include "tools/cli/cli.h"
#include "tools/cli/commands.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace fathom::cli {

int cmd_import(const Args& a) {
    const std::string path = one_file(a);
    if (std::filesystem::is_directory(path)) throw sim::InputError("cannot read the file: it is a directory", path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw sim::InputError("cannot read the file", path);
    std::ostringstream text;
    text << in.rdbuf();
    const auto catalog = scenarios::load_catalog();
    std::optional<plans::Scenario> scenario;
    if (!a.scenario.empty()) scenario = scenarios::load_scenario(a.scenario, *catalog, a.sets);
    else if (!a.sets.empty()) throw sim::InputError("command line: --set changes the --scenario given with it");
    const scenarios::imports::Context context{scenario ? &*scenario : nullptr, catalog.get(), a.case_id};
    const YAML::Node doc = scenarios::imports::import_file({path, text.str()}, a.from, context);
    YAML::Emitter out;
    out.SetDoublePrecision(12);
    out << doc;
    const std::string yaml =
        std::string(
            "# measured-format v1 (with fathom's extension, scenarios/measured-format-fathom.md),\n"
            "# written by fathom import from ") +
        path + "\n" + out.c_str() + "\n";
    if (a.out.empty()) std::cout << yaml;
    else write_file(a.out, yaml);
    return 0;
}

}  // namespace fathom::cli
