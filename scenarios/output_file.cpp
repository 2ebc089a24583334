#include "scenarios/output_file.h"

#include "sim/error.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace fathom::scenarios {
namespace {

namespace fs = std::filesystem;

// Writes `text` to an open stream of `path`, throwing if any of it was lost.
void write_all(std::ofstream& out, const std::string& path, const std::string& text) {
    if (!out) throw sim::InputError("cannot write '" + path + "'");
    out << text;
    out.flush();
    if (!out) throw sim::InputError("cannot write '" + path + "' (disk full?)");
}

}  // namespace

void write_output_file(const std::string& path, const std::string& text) {
    // /dev/stdout, /dev/fd/N and /proc/self/fd/N name an open descriptor (a pipe, a terminal, or a
    // file the shell redirected): written in place, as a renamed file would not be what it names.
    if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0) {
        std::ofstream out(path, std::ios::binary | std::ios::app);
        write_all(out, path, text);
        return;
    }
    std::error_code ec;
    // Follow symlinks (relative ones from their own folder) to the file they name, if any.
    fs::path target(path);
    for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
        if (hops == 40) throw sim::InputError("cannot write '" + path + "': too many symbolic links");
        const fs::path next = fs::read_symlink(target, ec);
        if (ec) throw sim::InputError("cannot write '" + path + "': " + ec.message());
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    const fs::file_status st = fs::status(target, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        if (fs::is_directory(st)) throw sim::InputError("cannot write '" + path + "': it is a directory");
        std::ofstream out(target, std::ios::binary);  // a device or a FIFO: in place
        write_all(out, path, text);
        return;
    }
    const std::string tmp = target.string() + ".fathom-tmp";
    {
        std::ofstream out(tmp, std::ios::binary);
        try {
            write_all(out, path, text);
        } catch (const sim::InputError&) {
            out.close();
            std::remove(tmp.c_str());
            throw;
        }
    }
    if (std::rename(tmp.c_str(), target.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw sim::InputError("cannot write '" + path + "'");
    }
}

}  // namespace fathom::scenarios
