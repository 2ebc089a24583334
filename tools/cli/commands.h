#pragma once
// The `fathom` CLI's command and option tables: one place that says which commands exist, what
// each takes and what each option means. The parser (main.cpp) accepts for a command only the
// options its row names; `fathom COMMAND --help`, the general usage and the shell completion
// scripts (`fathom completion bash|zsh`) are all written from these tables, so they cannot drift
// from what the parser accepts.
#include "tools/cli/cli.h"

#include <string>
#include <vector>

namespace fathom::cli {

// What a command's positional arguments are, for the completion scripts.
enum class Positional {
    None,
    Yaml,        // scenario or measurement files
    Any,         // any file (a scenario or a search result)
    Csv,         // measurement files (calibrate: CSVs; refit: a measured-format YAML)
    Category,    // `list`'s categories
    Subcommand,  // `calibrate fit|layers`, `completion bash|zsh`
};

struct OptionSpec {
    const char* name;   // long name, without "--"
    char short_name;    // 0: none
    const char* value;  // the value's placeholder ("FILE", "N"), nullptr for a flag
    const char* help;
};

struct CommandSpec {
    const char* name;
    const char* synopsis;     // the arguments after the command's name
    const char* description;  // what it does, wrapped at 100 columns, indented by 6
    std::vector<const char*> options;
    Positional positional;
    std::vector<const char*> words;  // the sub-commands (Subcommand)
};

const std::vector<OptionSpec>& option_table();
const std::vector<CommandSpec>& command_table();
const CommandSpec* find_command(const std::string& name);
const OptionSpec* find_option(const std::string& name);
// `fathom list`'s categories, in its order, "keys" last (tools/cli/list.cpp).
std::vector<std::string> list_categories();

// `fathom --help`: every command's synopsis and description, then the exit codes.
std::string general_usage();
// `fathom COMMAND --help`: its synopsis, description and options.
std::string command_usage(const CommandSpec& c);
// The exit-status contract, as printed by --help and the README.
const char* exit_codes_text();

// `fathom --version`: version, git commit, the catalog's and the calibration sets' versions.
int print_version();
// `fathom completion bash|zsh` (tools/cli/completion.cpp).
int cmd_completion(const Args& a);

}  // namespace fathom::cli
