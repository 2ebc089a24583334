#include "sim/input_file.h"

#include "sim/error.h"

#include <filesystem>
#include <system_error>

namespace fathom::sim {

std::ifstream open_input(const std::string& path, const std::string& what) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) throw InputError("cannot open the " + what + ": no such file", path);
    if (fs::is_directory(st)) throw InputError("cannot open the " + what + ": it is a directory", path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot open the " + what + ": not readable", path);
    return in;
}

void strip_bom(std::string& line) {
    if (line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
}

}  // namespace fathom::sim
