// The bad-value suite, generated from the key declarations (plans/keys.h): every declared key of a
// scenario is set, the way --set does, to values it cannot take (not a number, NaN, infinity, a
// fraction for an integer, beyond the 64-bit range, below its minimum, above its maximum, a wrong
// or missing unit, an unknown choice, a malformed list), and each must be refused with an
// InputError that names the file and that key. A key the generator cannot reach alone (its
// section needs other keys first) is listed with the reason. The count of cases is printed, so a
// key added without a range shows up here.
#include "plans/keys.h"
#include "plans/search_keys.h"
#include "scenarios/scenario.h"
#include "sim/error.h"
#include "sim/units.h"
#include "tests/support/fixtures.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace fathom;

namespace {

std::string text_of(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    REQUIRE(f != nullptr);
    std::string s;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
}

std::string number(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

// Values no key of this type can take.
std::vector<std::string> bad_values(const plans::KeyInfo& k) {
    using plans::KeyType;
    std::vector<std::string> v;
    switch (k.type) {
        case KeyType::Integer:
            v = {"abc", "1.5", "nan", "99999999999999999999", "12abc"};
            if (std::isfinite(k.min)) v.push_back(number(k.min - 1));
            if (std::isfinite(k.max) && k.max < 9e15) v.push_back(number(k.max + 1));
            break;
        case KeyType::Number:
            v = {"abc", "nan", "inf", "-inf", "1e400", "3 apples"};
            if (std::isfinite(k.min)) v.push_back(number(k.min == 0 ? -1 : k.min - std::fabs(k.min) * 0.5 - 1e-9));
            if (std::isfinite(k.max) && k.max < 9e15) v.push_back(number(k.max * 2 + 1));
            break;
        case KeyType::Quantity:
            v = {"abc", "12 parsecs",
                 "nan " + std::string(sim::dimension_example(k.unit))
                              .substr(std::string(sim::dimension_example(k.unit)).find(' ') + 1)};
            break;
        case KeyType::Boolean: v = {"maybe", "2"}; break;
        case KeyType::Choice:
            if (!k.choices.empty()) v = {"no-such-choice"};
            break;
        case KeyType::ChoiceList:
            if (!k.choices.empty()) v = {"[no-such-choice]"};
            v.push_back("[a, , b]");
            break;
        case KeyType::IntegerList:
            v = {"[1, x]", "[1.5]", "[16abc, 16]"};
            if (std::isfinite(k.min)) v.push_back("[" + number(k.min - 1) + "]");
            break;
        case KeyType::Text: break;
    }
    return v;
}

// Keys set through another mechanism, or whose section cannot stand alone in the base scenarios.
const std::map<std::string, std::string>& unreachable() {
    static const std::map<std::string, std::string> m = {
        {"kind", "selects the scenario's kind, and with it every other key"},
    };
    return m;
}

}  // namespace

TEST_CASE("every declared key refuses values it cannot take, naming the file and the key", "[scenarios][robustness]") {
    const auto& cat = testing::source_catalog();
    // A base scenario for each top-level section, with the sections its keys need.
    const std::string training = text_of(testing::example("quickstart.yaml"));
    const std::string serving = text_of(testing::example("serving-llama70b-8xh100.yaml"));
    const std::string disagg = text_of(testing::example("serving-disaggregated.yaml"));
    const std::string search_t = text_of(testing::example("search-llama3-70b-64xh100.yaml"));
    const std::string search_s = text_of(testing::example("search-serving-llama3-70b-64xh100.yaml"));
    const std::string rl = text_of(testing::example("rl-grpo-qwen3-8b-8xh100.yaml"));
    // An inline model (the catalog's Llama 3 8B) so that model.* keys apply; with `extra` fields.
    auto inline_model = [](const std::string& extra) {
        return "name: inline\nkind: training\ncluster: {accelerator: h100-sxm-80gb, nodes: 1, gpus_per_node: 8}\n"
               "model: {name: m, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256,\n"
               "        max_seq_len: 8192, activation: swiglu, norm: rmsnorm, position_embedding: rope" +
               extra +
               "}\nparallel: {tp: 1}\ntraining: {seq_len: 4096, global_batch_size: 64, micro_batch_size: 1}\nstack: "
               "nemo-24.07\n";
    };

    int cases = 0, keys = 0;
    std::vector<std::string> failures;
    std::set<std::string> skipped;
    for (const plans::KeyInfo* k : plans::all_keys()) {
        if (unreachable().count(k->path)) {
            skipped.insert(k->path);
            continue;
        }
        const auto values = bad_values(*k);
        if (values.empty()) continue;
        const std::string sec = k->section();
        const std::string top = sec.substr(0, sec.find('.'));
        std::string base = training;  // top-level, cluster, parallel, training, stack keys
        if (sec == "model.moe")
            base = inline_model(",\n        architecture: moe, moe: {num_experts: 8, top_k: 2, expert_ffn: 1024}");
        else if (sec == "model.mla")
            base = inline_model(
                ",\n        mla: {kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128}");
        else if (top == "model") base = inline_model("");
        else if (top == "serving" && k->path.find("disaggregation") != std::string::npos) base = disagg;
        else if (top == "serving" || top == "traffic" || top == "slo" || top == "capacity") base = serving;
        else if (top == "rl") base = rl;
        else if (top == "search")
            base = plans::find_search_key(k->path)->serves(plans::WorkloadKind::Training) ? search_t : search_s;
        ++keys;
        for (const std::string& bad : values) {
            ++cases;
            std::string what;
            // Sections with required keys of their own get them first; the bad value comes last.
            std::vector<std::string> sets;
            if (sec == "traffic.shared_prefix") sets = {"traffic.shared_prefix.groups=4"};
            if (sec.rfind("traffic.sessions", 0) == 0) sets = {"traffic.sessions.turns=3"};
            if (sec == "run")
                sets = {"cluster.ssd=nvme-gen5-14gbs", "run.target_tokens=1e9", "run.failures=none", "run.detect=1 min",
                        "run.restart=1 min"};
            sets.push_back(k->path + "=" + bad);
            try {
                scenarios::load_scenario_text(base, "bad.yaml", cat, sets);
                what = "accepted";
            } catch (const sim::InputError& e) {
                const std::string msg = e.what();
                if (msg.find("bad.yaml") == std::string::npos) what = "no file in: " + msg;
                else if (msg.find("'" + k->path + "'") == std::string::npos &&
                         msg.find("'" + k->path + "[") == std::string::npos && e.key() != k->path)
                    what = "names another key: " + msg;
            } catch (const std::exception& e) {
                what = std::string("not an input error: ") + e.what();
            }
            if (!what.empty()) failures.push_back(k->path + "=" + bad + ": " + what);
        }
    }
    for (const auto& f : failures) UNSCOPED_INFO(f);
    WARN(cases << " bad values over " << keys << " keys, " << failures.size() << " not refused as they should be; "
               << skipped.size() << " keys not generated");
    CHECK(failures.empty());
    CHECK(cases >= 500);
}
