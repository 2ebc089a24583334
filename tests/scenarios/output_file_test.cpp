// Output files (scenarios/output_file.h): a regular file is replaced whole, a symlink stays a link
// with its target replaced, /dev/null stays the device, a directory is refused naming the path.
#include "scenarios/output_file.h"

#include "sim/error.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;
using fathom::scenarios::write_output_file;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("an output file replaces a file whole and writes through links and devices", "[scenarios][robustness]") {
    const fs::path dir = fs::temp_directory_path() / "fathom_output_file_test";
    fs::remove_all(dir);
    fs::create_directories(dir / "real");
    const fs::path file = dir / "out.json";
    write_output_file(file.string(), "first\n");
    write_output_file(file.string(), "second\n");
    CHECK(read(file) == "second\n");
    CHECK_FALSE(fs::exists(dir / "out.json.fathom-tmp"));
    // A relative symlink to a file in another folder: the link stays, its target is written.
    fs::create_symlink("real/target.json", dir / "link.json");
    write_output_file((dir / "link.json").string(), "through the link\n");
    CHECK(fs::is_symlink(fs::symlink_status(dir / "link.json")));
    CHECK(read(dir / "real" / "target.json") == "through the link\n");
    // A character device is written in place, not replaced by a regular file.
    write_output_file("/dev/null", "nothing\n");
    CHECK(fs::is_character_file("/dev/null"));
    CHECK_THROWS_WITH(write_output_file((dir / "real").string(), "x"),
                      Catch::Contains("fathom_output_file_test/real") && Catch::Contains("it is a directory"));
    fs::remove_all(dir);
}
