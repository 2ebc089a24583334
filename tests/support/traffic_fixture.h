#pragma once
// Shared by the traffic, trace and serving tests: draining a request source, and files written for
// one test binary's run (traces, CSVs) in a scratch directory removed when the process exits.
#include "workloads/serving/traffic/traffic.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fathom::testing {

inline std::vector<workloads::serving::Request> all(workloads::serving::RequestSource& s) {
    std::vector<workloads::serving::Request> out;
    while (auto r = s.next()) out.push_back(*r);
    return out;
}

// One directory per process (test cases may run in parallel).
inline std::filesystem::path scratch() {
    struct Dir {
        std::filesystem::path path =
            std::filesystem::temp_directory_path() / ("fathom-test-" + std::to_string(::getpid()));
        Dir() { std::filesystem::create_directories(path); }
        ~Dir() {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    };
    static const Dir dir;
    return dir.path;
}

// Writes `text` to scratch()/name (bytes as given) and returns the path.
inline std::string write_file(const std::string& name, const std::string& text) {
    const auto path = scratch() / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

}  // namespace fathom::testing
