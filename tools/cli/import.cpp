// `fathom import FILE [--from TOOL] [--scenario SCENARIO.yaml] [-o MEASURED.yaml]`: a benchmark's
// result (vLLM, SGLang, GenAI-Perf, AIPerf), nccl-tests output or a training log (Megatron-LM, NeMo)
// as measured-format cases, or a layer's kernel profile (torch.profiler, nsys) as layers.csv rows (scenarios/imports/),
// for `fathom compare` to check fathom against the user's own cluster. Printed, or written whole to -o.
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
    const scenarios::imports::Source file{path, text.str()};
    if (const auto& importer = scenarios::imports::importer_of(file, a.from); importer.layer_rows) {
        const std::string csv = importer.layer_rows(file, context);  // a kernel profile: layers.csv rows
        if (a.out.empty()) std::cout << csv;
        else write_file(a.out, csv);
        return 0;
    }
    const YAML::Node doc = scenarios::imports::import_file(file, a.from, context);
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
