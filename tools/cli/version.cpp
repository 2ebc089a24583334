// `fathom --version`: what a prediction came from. The program's version and commit (the commit is
// written at build time by tools/cli/git_commit.cmake), the catalog's fingerprint and each measured
// calibration table's fingerprint and campaign date (scenarios/data_version.h).
#include "git_commit.h"
#include "scenarios/catalog.h"
#include "scenarios/data_version.h"
#include "tools/cli/commands.h"

#include <cstdio>

#ifndef FATHOM_VERSION
#define FATHOM_VERSION "unknown"
#endif

namespace fathom::cli {

namespace {

const char* build_type() {
#ifdef NDEBUG
    return "optimized";
#else
    return "debug (assertions on)";
#endif
}

}  // namespace

int print_version() {
    std::printf("fathom %s (commit %s, %s build)\n", FATHOM_VERSION, FATHOM_GIT_COMMIT, build_type());
    std::fflush(stdout);
    // The catalog is read whole, as every command reads it: a broken catalog is reported here too.
    const std::string root = scenarios::data_dir();
    const auto catalog = scenarios::load_catalog(root);
    const scenarios::DataVersion v = scenarios::data_version(*catalog, root);
    std::printf("catalog     %s (%zu files under %s)\n", v.catalog.c_str(), v.catalog_files, v.root.c_str());
    if (v.calibration.empty()) std::printf("calibration none (every accelerator priced by its roofline)\n");
    for (size_t i = 0; i < v.calibration.size(); ++i) {
        const auto& c = v.calibration[i];
        std::printf("%s %-18s %s %s%s%s\n", i == 0 ? "calibration" : "           ", c.device.c_str(),
                    c.fingerprint.c_str(), c.table.c_str(), c.date.empty() ? "" : ", campaign of ", c.date.c_str());
    }
    return 0;
}

}  // namespace fathom::cli
