// The measured-format reader against bad values, generated: every scalar field of a training case
// and of three microbenchmark cases (a GEMM, a p2p copy, a host copy; tools/fuzz/corpus/measured/)
// is replaced in turn by values that field cannot mean (text, NaN, infinity, zero, negative,
// beyond int64, a mapping, a list), and `compare` must answer each with an input error (file and line), an
// "unsupported" case with its reason, or a finite prediction: never another exception (an internal error, exit 1), a
// crash, or a NaN passed off as a prediction. The fields are found by walking the YAML, so a field added to the format
// is covered without listing it.
#include "plans/context.h"
#include "scenarios/catalog.h"
#include "scenarios/measured.h"
#include "sim/error.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace fathom;

namespace {

// Paths (as key chains) of every scalar under `n`.
void scalars(const YAML::Node& n, std::vector<std::string>& path, std::vector<std::vector<std::string>>& out) {
    if (n.IsScalar()) {
        out.push_back(path);
        return;
    }
    if (!n.IsMap()) return;  // lists (notes) are free text
    for (const auto& kv : n) {
        path.push_back(kv.first.as<std::string>());
        scalars(kv.second, path, out);
        path.pop_back();
    }
}

YAML::Node at(YAML::Node n, const std::vector<std::string>& path) {
    for (const auto& k : path) n.reset(n[k]);
    return n;
}

}  // namespace

TEST_CASE("every field of a measured case refuses bad values cleanly", "[scenarios][robustness]") {
    plans::EvaluationContext ctx = scenarios::make_context(scenarios::load_catalog(FATHOM_SOURCE_DIR), 1);
    ctx.max_tasks = 1'000'000;  // a fuzzed global batch must not exhaust memory
    const std::string tmp = std::string(FATHOM_BINARY_DIR) + "/bad_measured_case.yaml";
    const std::vector<std::string> bad = {"abc", ".nan", ".inf", "0", "-3", "99999999999999999999", "{a: 1}", "[1, 2]"};
    int runs = 0, refused = 0, unsupported = 0, predicted = 0;
    std::vector<std::string> failures;
    for (const char* file : {"training.yaml", "microbench.yaml", "p2p.yaml", "memcpy.yaml"}) {
        const YAML::Node doc = YAML::LoadFile(std::string(FATHOM_SOURCE_DIR) + "/tools/fuzz/corpus/measured/" + file);
        std::vector<std::vector<std::string>> fields;
        std::vector<std::string> path;
        scalars(doc["cases"][0], path, fields);
        REQUIRE(fields.size() > 20);
        for (const auto& f : fields) {
            for (const std::string& value : bad) {
                YAML::Node copy = YAML::Clone(doc);
                at(copy["cases"][0], f) = YAML::Load(value);
                {
                    std::ofstream out(tmp);
                    out << copy;
                }
                std::string where;
                for (const auto& k : f) where += (where.empty() ? "" : ".") + k;
                ++runs;
                try {
                    const auto results = scenarios::compare_measured(tmp, ctx);
                    for (const auto& r : results) {
                        if (!r.ok()) {
                            ++unsupported;
                            if (r.reason.empty())
                                failures.push_back(where + "=" + value + ": unsupported without a reason");
                        } else if (!std::isfinite(r.predicted) || !std::isfinite(r.error)) {
                            failures.push_back(where + "=" + value + ": a non-finite prediction");
                        } else {
                            ++predicted;
                            // The fields the prediction is made of never take text silently.
                            static const std::set<std::string> used = {"model.layers",
                                                                       "model.hidden",
                                                                       "model.heads",
                                                                       "model.kv_heads",
                                                                       "model.ffn",
                                                                       "model.vocab",
                                                                       "model.activation",
                                                                       "model.norm",
                                                                       "model.position_embedding",
                                                                       "training.tp",
                                                                       "training.pp",
                                                                       "training.cp",
                                                                       "training.dp",
                                                                       "training.micro_batch_size",
                                                                       "training.global_batch_size",
                                                                       "training.recompute",
                                                                       "precision.dtype",
                                                                       "cluster.nodes",
                                                                       "cluster.gpus_per_node",
                                                                       "hardware.accelerator",
                                                                       "value",
                                                                       "metric",
                                                                       "kind"};
                            if (value == "abc" && used.count(where))
                                failures.push_back(where + "=abc: accepted silently");
                        }
                    }
                } catch (const sim::InputError& e) {
                    ++refused;
                    if (std::string(e.what()).find("bad_measured_case.yaml") == std::string::npos)
                        failures.push_back(where + "=" + value + ": the error does not name the file: " + e.what());
                } catch (const std::exception& e) {
                    failures.push_back(where + "=" + value + ": not an input error: " + e.what());
                }
            }
        }
    }
    std::remove(tmp.c_str());
    for (const auto& f : failures) UNSCOPED_INFO(f);
    WARN(runs << " bad values: " << refused << " refused, " << unsupported << " unsupported, " << predicted
              << " predicted (a field that does not reach the prediction, such as a description); " << failures.size()
              << " failures");
    CHECK(failures.empty());
    CHECK(runs >= 300);
}
