#pragma once
// `fathom export`: a plan written as what a framework takes to run it (launch configurations), and
// read back. One dialect per framework (scenarios/launch/<name>.cpp), registered by name: the
// training frameworks (Megatron-LM, NeMo, torchtitan) take a training plan, the serving engines
// (vLLM, SGLang, TensorRT-LLM) a serving plan, one command per pool when it is disaggregated. Each
// dialect uses the flag names of the framework version its stack or engine preset names, and cites
// the source file of each flag in the text it writes.
//
// A plan the framework cannot express (a schedule it lacks, a sharding it has no flag for) is an
// input error naming the scenario file and the plan key, never a config that silently runs a
// different plan. A dialect's `read` turns its own files back into the measured-format fields they
// state (a case's `training` or `serving` block, and `precision`), so that compare's translator
// can check the round trip: the plan read back is the plan exported.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "sim/registry.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/training/training_plan.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fathom::scenarios::launch {

// What to launch: a model on a cluster under one plan (training or serving).
struct Job {
    std::string name;  // the scenario's name, for the files' headers
    std::string file;  // the scenario file errors name ("" when none)
    const models::ModelSpec* model = nullptr;
    const hardware::ClusterSpec* cluster = nullptr;
    const workloads::TrainingPlan* training = nullptr;
    const workloads::serving::ServingPlan* serving = nullptr;
};

struct LaunchFile {
    std::string name;  // e.g. "megatron.sh", "prefill.sh", "torchtitan.toml"
    std::string text;
};

struct Dialect {
    const char* kind;  // "training" or "serving"
    std::vector<LaunchFile> (*write)(const Job& job);
    // The measured-format fields `files` state for `model` (the model they run: a framework's
    // flavor names it, a layer split needs its layers): {training: {...}, precision: {...}} or
    // {serving: {...}, precision: {...}}.
    YAML::Node (*read)(const std::vector<LaunchFile>& files, const models::ModelSpec& model);
};

const sim::Registry<Dialect>& launch_registry();

// The files `framework` takes for `job` (an InputError for an unknown framework, a framework of the
// other kind, or a plan it cannot express).
std::vector<LaunchFile> export_launch(const Job& job, const std::string& framework);

// Helpers of the dialects.
// An input error: `framework` cannot express the plan's `key` (a scenario key path), naming the file.
[[noreturn]] void cannot(const Job& job, const std::string& framework, const std::string& key, const std::string& why);
// A shell word: as is when it is plain, else in single quotes.
std::string shell_quote(const std::string& word);
// The words of a shell script's command lines: comments dropped, line continuations joined,
// quotes removed; `VAR=value` assignments and `${VAR:-default}` expansions read as their default.
std::vector<std::string> shell_words(const std::string& script);
// "--name value" and "--name" (a switch: "true") pairs of `words` from index `from`; a later
// occurrence replaces an earlier one. `--name=value` is read too.
std::map<std::string, std::string> flag_values(const std::vector<std::string>& words, size_t from = 0);
// A command line written one flag per line ("  --flag value \\\n"), with a comment block above it
// naming where each flag is defined (`cite`: "path:line", relative to the version's source).
class CommandLine {
public:
    explicit CommandLine(std::string head) : head_(std::move(head)) {}
    void flag(const std::string& name, const std::string& value = "", const std::string& cite = "");
    void flag(const std::string& name, int64_t value, const std::string& cite = "") {
        flag(name, std::to_string(value), cite);
    }
    // A value written as given (already quoted for the shell: JSON, an expansion).
    void raw(const std::string& name, const std::string& quoted, const std::string& cite = "");
    // A switch: a flag without a value.
    void on(const std::string& name, const std::string& cite = "") { flag(name, "", cite); }
    // The command; with `sources` (the version whose lines the cites are), the comment block first.
    std::string text(const std::string& sources = "") const;

private:
    std::string head_;
    std::vector<std::string> lines_;
    std::vector<std::pair<std::string, std::string>> cites_;  // flag, where it is defined
};
// A number as the shortest text that reads back to it ("0.9", "1e-05"), and as a YAML scalar.
std::string number_text(double v);
YAML::Node yaml_number(double v);

}  // namespace fathom::scenarios::launch
