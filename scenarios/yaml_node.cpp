#include "scenarios/yaml_node.h"

#include "scenarios/yaml_guard.h"
#include "sim/error.h"
#include "sim/input_file.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

namespace fathom::scenarios {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

}  // namespace

void Node::fail(const std::string& key, const std::string& message) const {
    int l = line();
    if (!key.empty() && node_.IsMap() && node_[key]) l = node_[key].Mark().line + 1;
    throw sim::InputError(message, file_, l, key.empty() ? path_ : key_path(key));
}

void Node::allow_only(std::initializer_list<const char*> allowed) const {
    allow_only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void Node::allow_only(const std::vector<std::string>& allowed) const {
    if (!node_.IsMap()) fail("", "expected a mapping");
    for (const auto& kv : node_) {
        const std::string k = kv.first.as<std::string>();
        bool ok = false;
        for (const auto& a : allowed) ok = ok || k == a;
        if (ok) continue;
        std::string hint, all;
        size_t best = 4;
        for (const auto& a : allowed) {
            all += (all.empty() ? "" : ", ") + a;
            const size_t d = edit_distance(k, a);
            if (d < best) {
                best = d;
                hint = a;
            }
        }
        std::string msg = "unknown key '" + k + "'";
        if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
        msg += "; allowed here: " + all;
        throw sim::InputError(msg, file_, kv.first.Mark().line + 1, key_path(k));
    }
}

bool Node::has(const std::string& key) const { return node_.IsMap() && node_[key]; }

Node Node::child(const std::string& key) const {
    if (!node_.IsMap()) fail("", "expected a mapping");
    if (!node_[key]) fail("", "missing required key '" + key + "'");
    return Node(node_[key], file_, key_path(key));
}

std::optional<Node> Node::find(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return child(key);
}

std::string Node::scalar() const {
    if (!node_.IsScalar()) fail("", "expected a single value");
    return node_.Scalar();
}

std::string Node::value_text(const std::string& key, const char* what) const {
    const Node c = child(key);
    if (!c.node_.IsScalar())
        fail(key, std::string("expected ") + what + ", got " + (c.node_.IsSequence() ? "a list" : "a mapping"));
    return c.node_.Scalar();
}

std::string Node::str(const std::string& key) const { return value_text(key, "a string"); }

int64_t Node::integer(const std::string& key) const {
    const std::string s = value_text(key, "an integer");
    try {
        size_t pos = 0;
        const long long v = std::stoll(s, &pos);
        if (pos == s.size()) return v;
    } catch (const std::exception&) {}
    fail(key, "expected an integer, got '" + s + "'");
}

double Node::number(const std::string& key) const {
    const std::string s = value_text(key, "a number");
    try {
        size_t pos = 0;
        const double v = std::stod(s, &pos);
        if (pos == s.size()) return v;
    } catch (const std::exception&) {}
    fail(key, "expected a number, got '" + s + "'");
}

bool Node::boolean(const std::string& key) const {
    const std::string s = value_text(key, "true or false");
    if (s == "true") return true;
    if (s == "false") return false;
    fail(key, "expected true or false, got '" + s + "'");
}

double Node::quantity(const std::string& key, sim::Dimension dim) const {
    const std::string s = value_text(key, "a value with its unit");
    try {
        return sim::parse_quantity(s, dim);
    } catch (const sim::UnitError& e) {
        fail(key, e.what());
    }
}

double Node::sourced_quantity(const std::string& key, sim::Dimension dim) const {
    const Node c = child(key);
    c.allow_only({"value", "source"});
    if (c.str("source").empty()) c.fail("source", "empty source");
    return c.quantity("value", dim);
}

double Node::sourced_number(const std::string& key) const {
    const Node c = child(key);
    c.allow_only({"value", "source"});
    if (c.str("source").empty()) c.fail("source", "empty source");
    return c.number("value");
}

bool Node::sourced_bool(const std::string& key) const {
    const Node c = child(key);
    c.allow_only({"value", "source"});
    if (c.str("source").empty()) c.fail("source", "empty source");
    return c.boolean("value");
}

std::vector<Node> Node::items() const {
    if (!node_.IsSequence()) fail("", "expected a list");
    std::vector<Node> out;
    for (size_t i = 0; i < node_.size(); ++i) out.emplace_back(node_[i], file_, path_ + "[" + std::to_string(i) + "]");
    return out;
}

std::vector<std::string> Node::keys() const {
    std::vector<std::string> out;
    if (!node_.IsMap()) return out;
    for (const auto& kv : node_) out.push_back(kv.first.as<std::string>());
    return out;
}

namespace {

// yaml-cpp keeps the first of two equal keys and drops the rest without a word, and lets any node
// be a key: a scenario's keys are plain names, each at most once per mapping.
// A document's expanded size and depth, bounded before anything walks it: yaml-cpp shares an
// aliased node rather than copying it, so an alias inside its own anchor (`&a [*a]`) is a cycle
// every recursive walk follows for ever, and aliases of aliases ("billion laughs": nine lists of
// nine aliases of the one before) expand exponentially in the text's size. An explicit stack, so
// the check itself neither recurses nor expands more than the bound.
constexpr int kMaxDepth = kMaxYamlDepth;     // the shared measured file nests 6 deep
constexpr int64_t kMaxExpanded = 1'000'000;  // the shared measured file expands to 17,000 nodes

void check_size(const YAML::Node& root, const std::string& name) {
    std::vector<std::pair<YAML::Node, int>> stack{{root, 0}};
    int64_t expanded = 0;
    while (!stack.empty()) {
        const auto [n, depth] = stack.back();
        stack.pop_back();
        const int line = n.Mark().line + 1;
        if (depth > kMaxDepth)
            throw sim::InputError(
                "YAML nested deeper than " + std::to_string(kMaxDepth) + " levels (an alias inside its own anchor?)",
                name, line);
        if (++expanded > kMaxExpanded)
            throw sim::InputError("the YAML document expands to more than " + std::to_string(kMaxExpanded) +
                                      " values (aliases of aliases?); write it out or split it",
                                  name, line);
        if (n.IsSequence())
            for (YAML::const_iterator it = n.begin(); it != n.end(); ++it) stack.emplace_back(*it, depth + 1);
        else if (n.IsMap())
            for (YAML::const_iterator it = n.begin(); it != n.end(); ++it) {
                stack.emplace_back(it->first, depth + 1);
                stack.emplace_back(it->second, depth + 1);
            }
    }
}

void check_keys(const YAML::Node& n, const std::string& name, const std::string& path) {
    if (n.IsMap()) {
        std::set<std::string> seen;
        for (const auto& kv : n) {
            const int line = kv.first.Mark().line + 1;
            if (!kv.first.IsScalar())
                throw sim::InputError(
                    "a key must be a plain name, not a " + std::string(kv.first.IsMap() ? "mapping" : "sequence"), name,
                    line, path);
            const std::string key = kv.first.Scalar();
            const std::string at = path.empty() ? key : path + "." + key;
            if (!seen.insert(key).second)
                throw sim::InputError("duplicate key (a second value for it)", name, line, at);
            check_keys(kv.second, name, at);
        }
    } else if (n.IsSequence()) {
        for (const auto& x : n) check_keys(x, name, path);
    }
}

// yaml-cpp's Load reads the first document and ignores the rest; its LoadAll loops forever on some
// malformed text (a fuzzer found one). A document marker at the start of a line ('---' after
// content, or anything after '...') starts a second document: refused, at its line.
void check_one_document(const std::string& text, const std::string& name) {
    bool content = false, ended = false;
    int line = 0;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view l(text.data() + start, end - start);
        ++line;
        auto marker = [&](const char* m) {
            return l.substr(0, 3) == m && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
        };
        const size_t first = l.find_first_not_of(" \t\r");
        const bool blank = first == std::string_view::npos || l[first] == '#';
        if (marker("---")) {
            if (content || ended) throw sim::InputError("a second YAML document ('---'); a file holds one", name, line);
        } else if (marker("...")) {
            ended = true;
        } else if (!blank) {
            if (ended) throw sim::InputError("content after the end of the YAML document ('...')", name, line);
            if (l[0] != '%') content = true;  // directives (%YAML) precede the document
        }
        start = end + 1;
    }
}

}  // namespace

Node load_yaml_string(const std::string& text, const std::string& name) {
    try {
        check_one_document(text, name);
        check_yaml_syntax(text, name);
        YAML::Node root = YAML::Load(text);
        check_size(root, name);
        check_keys(root, name, "");
        return Node(root, name, "");
    } catch (const YAML::Exception& e) {
        throw sim::InputError("malformed YAML: " + e.msg, name, e.mark.line + 1);
    }
}

Node load_yaml_file(const std::string& path) {
    std::ifstream in = sim::open_input(path, "YAML file");
    std::stringstream ss;
    ss << in.rdbuf();
    Node n = load_yaml_string(ss.str(), path);
    if (!n.is_map()) throw sim::InputError("expected a YAML mapping at the top level", path, 1);
    return n;
}

NodeArena::NodeArena(const YAML::Node& document) { nodes_.push_back(document); }

YAML::Node NodeArena::map() {
    YAML::Node m(YAML::NodeType::Map);
    nodes_.push_back(m);  // m's memory (one node) joins the arena's, the document's
    return m;
}

std::vector<std::string> split_key_path(const std::string& path) {
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
        const size_t dot = path.find('.', start);
        parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) return parts;
        start = dot + 1;
    }
}

}  // namespace fathom::scenarios
