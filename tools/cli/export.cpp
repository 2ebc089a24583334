// `fathom export PLAN_OR_SEARCH_RESULT --for FRAMEWORK`: the launch configuration of a scenario's
// plan, or of a search result's candidate (`fathom search --json`: its scenario file, --set
// overrides and each candidate's changed plan keys), in the framework's own terms
// (scenarios/launch/). One file is printed (or written to -o FILE); several (one per pool of a
// disaggregated layout) are written into the -o directory, or printed one after another under
// "# ==> NAME <==" headers.
#include "plans/keys.h"
#include "scenarios/catalog.h"
#include "scenarios/launch/launch.h"
#include "scenarios/scenario.h"
#include "tools/cli/cli.h"
#include "tools/cli/commands.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace fathom::cli {

namespace {

namespace fs = std::filesystem;

// A JSON value of a search result's "keys" as the plan key's value.
plans::KeyValue key_value(const nlohmann::json& v, const std::string& file, const std::string& key) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
        std::vector<int64_t> out;
        for (const auto& x : v) {
            if (!x.is_number_integer()) break;
            out.push_back(x.get<int64_t>());
        }
        if (out.size() == v.size()) return out;
    }
    throw sim::InputError("not a plan key's value: " + v.dump(), file, 0, "candidates[].keys." + key);
}

// The scenario of a search result's candidate of rank `rank` (1: the best).
plans::Scenario search_candidate(const std::string& path, const plans::Catalog& catalog, int64_t rank,
                                 std::vector<std::string> sets) {
    std::ifstream in(path);
    if (!in) throw sim::InputError("cannot read the file", path);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw sim::InputError("not a JSON object (a `fathom search --json` result)", path);
    for (const char* k : {"scenario_file", "ranking", "candidates"})
        if (!j.contains(k))
            throw sim::InputError(
                std::string("no '") + k + "': not a search result of this fathom (fathom search --json)", path, 0, k);
    const auto& ranking = j["ranking"];
    if (!ranking.is_array() || ranking.empty()) throw sim::InputError("the search ranked no plan", path, 0, "ranking");
    if (rank > static_cast<int64_t>(ranking.size()))
        throw sim::InputError(
            "--rank " + std::to_string(rank) + ": the search ranked " + std::to_string(ranking.size()) + " plans", path,
            0, "ranking");
    const int64_t index = ranking[static_cast<size_t>(rank - 1)].get<int64_t>();
    const nlohmann::json* cand = nullptr;
    for (const auto& c : j["candidates"])
        if (c.contains("index") && c["index"] == index) cand = &c;
    if (!cand || !cand->contains("keys") || !(*cand)["keys"].is_object())
        throw sim::InputError("candidate " + std::to_string(index) + " has no plan keys", path, 0, "candidates");
    // The scenario as the search loaded it: its file (relative to the result's directory when not
    // found as given) and its overrides, then the command line's.
    fs::path scenario = j["scenario_file"].get<std::string>();
    if (!fs::exists(scenario) && fs::exists(fs::path(path).parent_path() / scenario))
        scenario = fs::path(path).parent_path() / scenario;
    std::vector<std::string> all;
    if (j.contains("sets"))
        for (const auto& s : j["sets"]) all.push_back(s.get<std::string>());
    all.insert(all.end(), sets.begin(), sets.end());
    plans::Scenario s = scenarios::load_scenario(scenario.string(), catalog, all);
    for (const auto& [key, v] : (*cand)["keys"].items()) {
        const plans::KeyValue value = key_value(v, path, key);
        if (auto* t = std::get_if<workloads::TrainingPlan>(&s.plan)) plans::set_training_key(*t, key, value);
        else if (auto* sv = std::get_if<workloads::serving::ServingPlan>(&s.plan))
            plans::set_serving_key(*sv, key, value);
        else throw sim::InputError("only training and serving plans are exported", path);
    }
    s.name += " (search rank " + std::to_string(rank) + ")";
    return s;
}

}  // namespace

int cmd_export(const Args& a) {
    const auto& frameworks = scenarios::launch::launch_registry();
    if (a.framework.empty()) throw sim::InputError("command line: export needs --for FRAMEWORK: " + frameworks.names());
    if (!frameworks.find(a.framework))
        throw sim::InputError("command line: --for: unknown framework '" + a.framework +
                              "'; valid: " + frameworks.names());
    const std::string input = one_file(a);
    const auto catalog = scenarios::load_catalog();
    const bool search = fs::path(input).extension() == ".json";
    if (!search && a.rank > 0)
        throw sim::InputError("command line: --rank picks a candidate of a search result (a .json file)");
    std::optional<plans::Scenario> loaded;
    try {
        loaded = search ? search_candidate(input, *catalog, a.rank > 0 ? a.rank : 1, a.sets)
                        : scenarios::load_scenario(input, *catalog, a.sets);
    } catch (const nlohmann::json::exception& e) {  // a value of the wrong JSON type
        throw sim::InputError(std::string("not a search result of this fathom: ") + e.what(), input);
    }
    const plans::Scenario& s = *loaded;
    if (s.rl()) throw sim::InputError("export: RL scenarios are not exported yet (their trainer and engines)", s.file);
    scenarios::launch::Job job{s.name, s.file, &s.model, &s.cluster, s.training(), s.serving()};
    const auto files = scenarios::launch::export_launch(job, a.framework);
    if (a.out.empty()) {
        for (const auto& f : files) std::cout << (files.size() > 1 ? "# ==> " + f.name + " <==\n" : "") << f.text;
        return 0;
    }
    if (files.size() == 1 && !fs::is_directory(a.out)) {
        write_file(a.out, files.front().text);
        return 0;
    }
    std::error_code ec;
    fs::create_directories(a.out, ec);
    if (ec || !fs::is_directory(a.out)) throw sim::InputError("-o: cannot make the directory '" + a.out + "'");
    for (const auto& f : files) write_file((fs::path(a.out) / f.name).string(), f.text);
    return 0;
}

}  // namespace fathom::cli
