#pragma once
// Internal to the measured-format front end (scenarios/measured*.cpp): a measured case read field by
// field and written as a scenario document.
//
// A translator reads the case through `Case`, by the format's dotted field paths ("training.tp").
// Every present field it looks at is recorded: those are the fields that reach the prediction, and
// every other configuration field of the case is reported as stated but not modelled
// (measured_schema.h). A value that maps onto a scenario key is checked as that key declares it
// (plans/keys.h: type, range, choices), so the case and a scenario file share one vocabulary; an
// error names the measurement file, the value's line and the case's own field path.
//
// The translator writes the scenario document (`ScenarioDoc`) in scenario key paths (model.*,
// cluster.*, parallel.*, training.*, stack.*, serving.*, traffic.*). A copied value is the case's
// own YAML node, so it keeps its line; each key remembers the case field it came from, so that an
// error of the scenario parser (scenarios/scenario.h) about it is reported against that field.
#include "plans/catalog.h"
#include "plans/constraints.h"
#include "plans/keys.h"
#include "plans/memory_fit.h"
#include "sim/error.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fathom::scenarios::measured {

// A case fathom cannot express yet, and why (an expected answer: the case is listed as unsupported).
struct Unsupported {
    std::string reason;
};

// An error in a measured case's input (a value at its line): compare stops with it (exit 2). Other
// input errors met while evaluating (a plan beyond the simulator's range) make the case unsupported.
class CaseError : public sim::InputError {
public:
    using sim::InputError::InputError;
};

class Case {
public:
    Case(YAML::Node c, std::string file) : root_(std::move(c)), file_(std::move(file)) {}
    const std::string& file() const { return file_; }
    const YAML::Node& raw() const { return root_; }

    // The node at `path` (undefined when absent); a present field is recorded as read.
    YAML::Node at(const std::string& path) const;
    bool has(const std::string& path) const { return at(path).IsDefined(); }
    // A single value as text, `fallback` when absent.
    std::string text(const std::string& path, const std::string& fallback = "") const;
    // One of the format's own vocabulary (`allowed`), `fallback` when absent; an input error naming
    // the choices otherwise (an unknown value never falls back silently).
    std::string choice(const std::string& path, std::initializer_list<const char*> allowed,
                       const std::string& fallback) const;
    std::string choice(const std::string& path, const std::vector<std::string>& allowed,
                       const std::string& fallback = "") const;
    // The value at `path` checked as the scenario key `key` declares it.
    plans::KeyValue value(const std::string& path, const std::string& key) const;
    int64_t integer(const std::string& path, const std::string& key) const;
    int64_t count(const std::string& path, int64_t min = 1) const;  // an integer >= min (no scenario key)
    bool flag(const std::string& path) const;                       // true or false
    double number(const std::string& path) const;                   // a finite number
    [[noreturn]] void fail(const std::string& path, const std::string& message) const;
    // The text of a single value at `path` without recording it as read ("" when absent).
    std::string peek(const std::string& path) const;
    // A deterministic prediction is every statistic of itself: `statistic` single, mean or median is
    // read (modelled); any other (max over a sweep, a percentile) is left unread, so reported.
    void accept_deterministic_statistic() const;

    // The fields read so far, by path.
    const std::set<std::string>& reads() const { return reads_; }

private:
    plans::KeyValue checked(const std::string& path, plans::KeyInfo as) const;
    YAML::Node root_;
    std::string file_;
    mutable std::set<std::string> reads_;
};

// A scenario document and where each of its values came from.
class ScenarioDoc {
public:
    // The case field at `path`, checked as `key` declares it, written at `key` (the case's own node).
    plans::KeyValue take(const Case& c, const std::string& path, const std::string& key);
    // A value the translator derived or filled in, at `key`; `origin` is the case field an error
    // about it names (empty: the key's section's origin).
    void set(const std::string& key, const std::string& value, const std::string& origin = "");
    void set(const std::string& key, int64_t value, const std::string& origin = "");
    void set(const std::string& key, bool value, const std::string& origin = "");
    void set_list(const std::string& key, const std::vector<int64_t>& values, const std::string& origin = "");
    // The origin of a section: where an error about it (or a key of it without its own origin)
    // points in the case.
    void section_origin(const std::string& section, const std::string& path) { origins_[section] = path; }
    bool has(const std::string& key) const;
    // The value at `key` as the key declares it (checked: a value the translator wrote is valid).
    plans::KeyValue value(const std::string& key) const;
    const YAML::Node& root() const { return root_; }
    // A copy whose mappings are its own (the values stay shared: none is ever written through).
    ScenarioDoc copy() const;

    // The case field and its line that an error at scenario key `key` is about ({"", 0} when none).
    std::pair<std::string, int> origin(const std::string& key, const Case& c) const;

private:
    void put(const std::string& key, YAML::Node value, const std::string& origin);
    YAML::Node root_{YAML::NodeType::Map};
    std::map<std::string, std::string> origins_;
};

// One scenario a case runs as, with the notes of the fill-ins that apply to it alone.
struct CaseScenario {
    ScenarioDoc doc;
    std::vector<std::string> notes;
    int range_value = 0;  // with Translation::range_key
};

// A case translated: its scenarios (one, or one per value of a setting the source leaves open) and
// what the translator assumed.
struct Translation {
    std::vector<CaseScenario> scenarios;
    std::string range_key;                 // empty: a single scenario
    std::string range_what;                // why a range: the setting the source leaves open, in words
    std::vector<std::string> assumptions;  // in report order
    std::vector<std::string> fill_ins;     // fill-ins of unstated fields not among the assumptions
    std::string stack = "defaults";        // the stack or engine preset used
    // Training: the settings the source leaves open, for plans::fit_memory before the run.
    std::optional<plans::MemoryFitOpen> memory_fit;
    // Why an impossible plan cannot run (the reason of the unsupported case).
    std::function<std::string(const std::vector<plans::Violation>&)> cannot_run;
};

}  // namespace fathom::scenarios::measured
