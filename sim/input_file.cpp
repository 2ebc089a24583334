#include "sim/input_file.h"

#include "sim/error.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace fathom::sim {

std::string input_problem(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) return "no such file";
    if (fs::is_directory(st)) return "it is a directory";
    if (::access(path.c_str(), R_OK) != 0) return "not readable";  // without opening it (a FIFO would block)
    return "";
}

std::ifstream open_input(const std::string& path, const std::string& what) {
    if (const std::string why = input_problem(path); !why.empty())
        throw InputError("cannot open the " + what + ": " + why, path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot open the " + what + ": not readable", path);
    return in;
}

void strip_bom(std::string& line) {
    if (line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
}

}  // namespace fathom::sim
