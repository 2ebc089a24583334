// The CLI's shared helpers (tools/cli/cli.h).
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <vector>

#include "sim/error.h"
#include "tools/cli/cli.h"

namespace fathom::cli {

std::string one_file(const Args& a) {
    if (a.positional.size() != 1) throw sim::InputError("'" + a.command + "' needs exactly one file argument");
    return a.positional.front();
}

// Writes a whole output file at once, after the work succeeded (never a partial file).
void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    if (!out) throw sim::InputError("cannot write '" + path + "'");
    out << text;
    if (!out) throw sim::InputError("cannot write '" + path + "'");
}

void write_json(const std::string& path, const nlohmann::json& j) { write_file(path, j.dump(2) + "\n"); }

std::string gib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / 1073741824.0);
    return buf;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace fathom::cli
