#pragma once
// Strict reading of YAML mappings: every read names its key, unknown keys are rejected with a
// "did you mean" hint, quantities must carry units, and every error carries file, line and the
// dotted key path (sim::InputError). YAML stops here: the rest of fathom sees typed specs.
#include "sim/units.h"

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace fathom::scenarios {

class Node {
public:
    Node(YAML::Node node, std::string file, std::string path)
        : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

    // Throws if the mapping has a key outside `allowed` (with a "did you mean" hint).
    void allow_only(std::initializer_list<const char*> allowed) const;
    void allow_only(const std::vector<std::string>& allowed) const;
    bool has(const std::string& key) const;
    Node child(const std::string& key) const;  // required
    std::optional<Node> find(const std::string& key) const;

    std::string str(const std::string& key) const;
    int64_t integer(const std::string& key) const;
    double number(const std::string& key) const;
    bool boolean(const std::string& key) const;
    double quantity(const std::string& key, sim::Dimension dim) const;
    // A catalog value {value: ..., source: "..."}: the source is required and non-empty.
    double sourced_quantity(const std::string& key, sim::Dimension dim) const;
    double sourced_number(const std::string& key) const;
    bool sourced_bool(const std::string& key) const;

    bool is_map() const { return node_.IsMap(); }
    bool is_scalar() const { return node_.IsScalar(); }
    std::vector<Node> items() const;        // sequence elements
    std::vector<std::string> keys() const;  // mapping keys in file order
    std::string scalar() const;             // this node as a string
    int line() const { return node_.Mark().line + 1; }
    const std::string& file() const { return file_; }
    const std::string& path() const { return path_; }
    [[noreturn]] void fail(const std::string& key, const std::string& message) const;
    const YAML::Node& raw() const { return node_; }

private:
    // The text of the single value at `key`; a list or mapping there fails as "expected <what>".
    std::string value_text(const std::string& key, const char* what) const;
    std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
    YAML::Node node_;
    std::string file_;
    std::string path_;
};

// New YAML mappings made inside the node memory of one large document. yaml-cpp 0.7 keeps one
// memory per connected set of nodes and copies the whole of it into a node's memory whenever a node
// of the other is assigned into it: a fresh mapping that shares nodes of a measurement file (a
// variant of a case, which keeps the lines of the case's values) would copy the whole file, per
// mapping made. The arena absorbs the document once; mappings it makes then live in that memory
// and share the document's nodes for nothing. It holds them until it goes.
class NodeArena {
public:
    explicit NodeArena(const YAML::Node& document);
    YAML::Node map();  // a new, empty mapping in the document's memory

private:
    YAML::Node nodes_{YAML::NodeType::Sequence};
};

// The parts of a dotted key path ("training.lora.rank" -> training, lora, rank; "" -> one empty part).
std::vector<std::string> split_key_path(const std::string& path);

// Loads a YAML file; a parse error becomes an InputError with file and line.
Node load_yaml_file(const std::string& path);
Node load_yaml_string(const std::string& text, const std::string& name);

}  // namespace fathom::scenarios
