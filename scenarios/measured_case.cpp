#include "scenarios/measured_case.h"

#include "scenarios/schema.h"
#include "scenarios/yaml_node.h"
#include "sim/error.h"

#include <cmath>

namespace fathom::scenarios::measured {
namespace {

std::string parent(const std::string& path) {
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

// The node at `path` under `root` (undefined when absent), without recording it.
YAML::Node lookup(const YAML::Node& root, const std::string& path) {
    YAML::Node at = root;
    for (const std::string& part : split_key_path(path)) {
        if (!at.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
        const YAML::Node& here = at;
        const YAML::Node next = here[part];
        if (!next.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
        at.reset(next);
    }
    return at;
}

int line_of(const YAML::Node& n) { return n.IsDefined() ? n.Mark().line + 1 : 0; }

// A field with no scenario key of its own, declared as such a key would be.
plans::KeyInfo plain(plans::KeyType type, double min = -HUGE_VAL) {
    plans::KeyInfo k;
    k.type = type;
    k.min = min;
    if (type == plans::KeyType::Integer) k.max = 2147483647.0;  // stored as int
    return k;
}

}  // namespace

YAML::Node Case::at(const std::string& path) const {
    const YAML::Node n = lookup(root_, path);
    if (n.IsDefined()) reads_.insert(path);
    return n;
}

std::string Case::text(const std::string& path, const std::string& fallback) const {
    const YAML::Node n = at(path);
    if (!n.IsDefined()) return fallback;
    if (!n.IsScalar()) fail(path, "expected a single value");
    return n.Scalar();
}

std::string Case::choice(const std::string& path, std::initializer_list<const char*> allowed,
                         const std::string& fallback) const {
    return choice(path, std::vector<std::string>(allowed.begin(), allowed.end()), fallback);
}

std::string Case::choice(const std::string& path, const std::vector<std::string>& allowed,
                         const std::string& fallback) const {
    const YAML::Node n = at(path);
    if (!n.IsDefined()) return fallback;
    const std::string v = n.IsScalar() ? n.Scalar() : std::string();
    std::string all;
    for (const std::string& a : allowed) {
        if (v == a) return v;
        all += (all.empty() ? "" : ", ") + a;
    }
    fail(path, "expected one of " + all + ", got '" + v + "'");
}

plans::KeyValue Case::checked(const std::string& path, plans::KeyInfo as) const {
    at(path);  // recorded
    as.path = path;
    const std::string section = parent(path);
    const Node n(section.empty() ? root_ : lookup(root_, section), file_, section);
    try {
        return read_value(n, as);
    } catch (const sim::InputError& e) {
        throw CaseError(e.bare_message(), e.file(), e.line(), e.key());
    }
}

plans::KeyValue Case::value(const std::string& path, const std::string& key) const {
    const plans::KeyInfo* info = plans::find_key(key);
    if (!info) throw sim::InternalError("measured: no scenario key '" + key + "'");
    return checked(path, *info);
}

int64_t Case::integer(const std::string& path, const std::string& key) const {
    return std::get<int64_t>(value(path, key));
}

int64_t Case::count(const std::string& path, int64_t min) const {
    return std::get<int64_t>(checked(path, plain(plans::KeyType::Integer, static_cast<double>(min))));
}

bool Case::flag(const std::string& path) const { return std::get<bool>(checked(path, plain(plans::KeyType::Boolean))); }

double Case::number(const std::string& path) const {
    const plans::KeyValue v = checked(path, plain(plans::KeyType::Number));
    return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
}

void Case::fail(const std::string& path, const std::string& message) const {
    YAML::Node n = lookup(root_, path);
    for (std::string p = path; !n.IsDefined() && !p.empty();) {
        p = parent(p);
        n.reset(p.empty() ? root_ : lookup(root_, p));
    }
    throw CaseError(message, file_, line_of(n), path);
}

std::string Case::peek(const std::string& path) const {
    const YAML::Node n = lookup(root_, path);
    return n.IsDefined() && n.IsScalar() ? n.Scalar() : std::string();
}

void Case::accept_deterministic_statistic() const {
    const std::string s = peek("statistic");
    if (s == "single" || s == "mean" || s == "median") at("statistic");
}

namespace {

// A copy of `n` in nodes of its own. Putting the case's own node into the document would merge the
// whole measurement file's node memory into it (yaml-cpp keeps one memory per connected set of
// nodes), which made every translation and every copy of a document cost as much as the file; an
// error about the value names the case field and its line through the document's origins instead.
YAML::Node fresh(const YAML::Node& n) {
    if (n.IsScalar()) return YAML::Node(n.Scalar());
    if (n.IsSequence()) {
        YAML::Node out(YAML::NodeType::Sequence);
        for (const auto& item : n) out.push_back(fresh(item));
        return out;
    }
    if (n.IsMap()) {
        YAML::Node out(YAML::NodeType::Map);
        for (const auto& kv : n) out[fresh(kv.first)] = fresh(kv.second);
        return out;
    }
    return YAML::Node(n.Type());
}

}  // namespace

plans::KeyValue ScenarioDoc::take(const Case& c, const std::string& path, const std::string& key) {
    plans::KeyValue v = c.value(path, key);
    put(key, fresh(lookup(c.raw(), path)), path);
    return v;
}

void ScenarioDoc::set(const std::string& key, const std::string& value, const std::string& origin) {
    put(key, YAML::Node(value), origin);
}

void ScenarioDoc::set(const std::string& key, int64_t value, const std::string& origin) {
    put(key, YAML::Node(std::to_string(value)), origin);
}

void ScenarioDoc::set(const std::string& key, bool value, const std::string& origin) {
    put(key, YAML::Node(value ? "true" : "false"), origin);
}

void ScenarioDoc::set_list(const std::string& key, const std::vector<int64_t>& values, const std::string& origin) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (int64_t v : values) list.push_back(YAML::Node(std::to_string(v)));
    put(key, list, origin);
}

bool ScenarioDoc::has(const std::string& key) const { return lookup(root_, key).IsDefined(); }

plans::KeyValue ScenarioDoc::value(const std::string& key) const {
    const plans::KeyInfo* info = plans::find_key(key);
    if (!info) throw sim::InternalError("measured: no scenario key '" + key + "'");
    const std::string section = parent(key);
    return read_value(Node(section.empty() ? root_ : lookup(root_, section), "", section), *info);
}

namespace {

YAML::Node copy_maps(const YAML::Node& n) {
    if (!n.IsMap()) return n;
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& kv : n) out[kv.first.Scalar()] = copy_maps(kv.second);
    return out;
}

}  // namespace

ScenarioDoc ScenarioDoc::copy() const {
    ScenarioDoc d;
    d.root_ = copy_maps(root_);
    d.origins_ = origins_;
    return d;
}

// Every mapping of the document is its own (created here), so replacing a value never writes
// through a node shared with the case: the old entry is removed, the new one added.
void ScenarioDoc::put(const std::string& key, YAML::Node value, const std::string& origin) {
    const auto parts = split_key_path(key);
    YAML::Node at = root_;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        YAML::Node next = at[parts[i]];
        if (!next.IsMap()) {
            at.remove(parts[i]);
            at[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = at[parts[i]];
        }
        at.reset(next);
    }
    at.remove(parts.back());
    at[parts.back()] = value;
    if (!origin.empty()) origins_[key] = origin;
}

std::pair<std::string, int> ScenarioDoc::origin(const std::string& key, const Case& c) const {
    for (std::string k = key; !k.empty(); k = parent(k)) {
        const auto it = origins_.find(k);
        if (it == origins_.end()) continue;
        for (std::string p = it->second;; p = parent(p)) {
            const YAML::Node n = p.empty() ? c.raw() : lookup(c.raw(), p);
            if (n.IsDefined() || p.empty()) return {it->second, line_of(n)};
        }
    }
    return {"", 0};
}

}  // namespace fathom::scenarios::measured
