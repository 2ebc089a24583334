#pragma once
// The `fathom` CLI's shared pieces: parsed arguments, file output (whole files, after the work
// succeeded) and number formatting, and the commands that live in their own files.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fathom::cli {

struct Args {
    std::string command;
    std::vector<std::string> positional;
    std::string json, trace, algorithm, device, out, requests, only_case, network;
    bool other_metrics = false;
    std::vector<std::string> sets;
};

// The one file argument of a command (InputError otherwise).
std::string one_file(const Args& a);
// Writes a whole output file at once (never a partial file); InputError when it cannot.
void write_file(const std::string& path, const std::string& text);
void write_json(const std::string& path, const nlohmann::json& j);
std::string gib(double bytes);  // "12.3 GiB"
double median_of(std::vector<double> v);

int cmd_list(const Args& a);       // tools/cli/list.cpp
int cmd_compare(const Args& a);    // tools/cli/compare.cpp
int cmd_calibrate(const Args& a);  // tools/cli/calibrate.cpp
int cmd_topology(const Args& a);   // tools/cli/topology.cpp

}  // namespace fathom::cli
