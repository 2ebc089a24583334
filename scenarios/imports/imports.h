#pragma once
// `fathom import`: the files users already have (a serving benchmark's result: vLLM, SGLang,
// GenAI-Perf, AIPerf; nccl-tests output; a Megatron-LM or NeMo training log) as measured-format cases
// (scenarios/measured-format-fathom.md, source type `import`), which `fathom compare` then checks fathom against. One
// importer per tool (scenarios/imports/<tool>.cpp), registered by name and recognized from the file's content.
//
// What a file does not say (a serving benchmark does not know the server's layout; a training log
// does not name the accelerator) comes from a scenario given alongside: its model, cluster and plan
// are written as the case's fields through the plan's own framework (scenarios/launch/: the
// dialect's files read back), so that compare runs the scenario's plan on the file's workload.
// A layer's kernel profile (torch.profiler, nsys: kernel_profile.cpp) becomes rows of layers.csv
// instead (Importer::layer_rows), its kernel time per op class, for `fathom calibrate layers`.
// A file of another tool, a truncated one, or a missing field is an input error naming the file,
// its line (or JSON key) and the field; nothing is written.
#include "plans/scenario.h"
#include "sim/registry.h"

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace fathom::plans {
class Catalog;
}

namespace fathom::scenarios::imports {

struct Source {
    std::string path;
    std::string text;
};

struct Context {
    const plans::Scenario* scenario = nullptr;  // given alongside (nullptr: none)
    const plans::Catalog* catalog = nullptr;
    std::string id;  // the case id ("" : from the file's name)
};

struct Importer {
    const char* what;                                                             // the tool and its file, for messages
    bool (*recognizes)(const Source& file);                                       // whether `file` is this tool's
    std::vector<YAML::Node> (*read)(const Source& file, const Context& context);  // its cases
    // A kernel profile's: rows of layers.csv (scenarios/layer_check.h) for `fathom calibrate
    // layers`, instead of cases (`read` is then nullptr).
    std::string (*layer_rows)(const Source& file, const Context& context) = nullptr;
};

const sim::Registry<Importer>& import_registry();

// The importer `tool`, or the one that recognizes `file` when `tool` is empty; an input error when
// `file` is not that tool's, or no importer's.
const Importer& importer_of(const Source& file, const std::string& tool);

// The measured-format document of `file` (format_version 1 and its cases), read by the importer
// `tool`, or by the one that recognizes it when `tool` is empty.
YAML::Node import_file(const Source& file, const std::string& tool, const Context& context);

// Helpers of the importers.
// A case's identity and provenance: id, kind, source (type import), trust and completeness.
YAML::Node new_case(const Source& file, const Context& context, const std::string& kind, const std::string& tool);
// The scenario's model, hardware and cluster, and its plan as its framework's launch files state it
// (`training` or `serving`, and `precision`), written into `c`; an input error naming the plan's
// key when its framework cannot express it, or the file when no scenario was given (`needs`: what
// the file leaves out).
void add_scenario(YAML::Node c, const Source& file, const Context& context, const std::string& needs);
// A metric entry: {metric, value, unit, statistic} and the qualifiers given.
YAML::Node metric(const std::string& name, double value, const std::string& unit, const std::string& statistic,
                  const std::string& scope = "");
// An input error about `file`'s `key`.
[[noreturn]] void fail(const Source& file, const std::string& key, const std::string& why, int line = 0);

}  // namespace fathom::scenarios::imports
