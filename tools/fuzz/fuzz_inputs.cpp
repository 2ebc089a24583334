// libFuzzer harnesses for the readers of user files. One binary per input (FATHOM_FUZZ_TARGET):
//   scenario         YAML text -> scenarios::load_scenario_text (every key, every check)
//   trace            a serving trace, CSV or JSONL by the first byte ('{' JSONL) -> open_trace, read to the end
//   calibration_csv  kernel measurements -> read_measurements_csv, then fit_calibration
//   layers_csv       whole-layer measurements -> read_layer_csv and check_layer_models
//   measured         a measured-format file -> compare_measured (every case simulated, with a replay
//                    limit of 1e6 tasks so a fuzzed global batch cannot exhaust memory)
// The contract: an input either loads, or is refused with sim::InputError. Anything else (another
// exception, a crash, a sanitizer report, a hang) is a finding. Build and run: tools/fuzz/run.sh.
#include "models/cost/calibration_table.h"
#include "scenarios/calibration_io.h"
#include "scenarios/catalog.h"
#include "scenarios/layer_check.h"
#include "scenarios/measured.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "workloads/serving/traffic/traffic.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

using namespace fathom;

namespace {

const plans::Catalog& catalog() {
    static const auto c = scenarios::load_catalog();
    return *c;
}

// The readers take paths: the input goes to a file of this process.
std::string to_file(const uint8_t* data, size_t size, const char* ext) {
    static const std::string base = "/tmp/fathom-fuzz-" + std::to_string(getpid());
    const std::string path = base + ext;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    return path;
}

void run(const uint8_t* data, size_t size) {
    const std::string target = FATHOM_FUZZ_TARGET;
    if (target == "scenario") {
        scenarios::load_scenario_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml", catalog());
    } else if (target == "trace") {
        const bool jsonl = size > 0 && data[0] == '{';
        auto source = workloads::serving::open_trace(to_file(data, size, jsonl ? ".jsonl" : ".csv"));
        for (int n = 0; n < 100000 && source->next(); ++n) {}
    } else if (target == "calibration_csv") {
        const auto file = scenarios::read_measurements_csv(to_file(data, size, ".csv"));
        if (!file.rows.empty() && file.rows.size() < 2000)
            models::fit_calibration(file.rows, catalog().accelerator("h100-sxm-80gb"));
    } else if (target == "measured") {
        static const plans::EvaluationContext ctx = [] {
            plans::EvaluationContext c = scenarios::make_context(scenarios::load_catalog(), 1);
            c.max_tasks = 1'000'000;
            return c;
        }();
        scenarios::compare_measured(to_file(data, size, ".yaml"), ctx);
    } else if (target == "layers_csv") {
        const std::string path = to_file(data, size, ".csv");
        scenarios::check_layer_models(scenarios::read_layer_csv(path), catalog(), path);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        run(data, size);
    } catch (const sim::InputError&) {
        // refused with a message: the expected outcome for a bad input
    }
    return 0;
}
