#pragma once
// Internal to plans/: the helpers the key tables (keys.cpp for scenario, model, cluster and
// training keys; serving_keys.cpp for serving keys) declare their keys with. Not installed, not
// included outside plans/.
#include "plans/keys.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace fathom::plans::key_decl {

constexpr double kMaxInt = 2147483647.0;  // keys stored as int

inline int64_t to_int(const KeyValue& v) { return std::get<int64_t>(v); }
inline int to_int32(const KeyValue& v) { return static_cast<int>(std::get<int64_t>(v)); }
inline double to_double(const KeyValue& v) {
    return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
}
inline bool to_bool(const KeyValue& v) { return std::get<bool>(v); }
inline const std::string& to_str(const KeyValue& v) { return std::get<std::string>(v); }

// A KeyInfo, built fluently.
struct Decl {
    KeyInfo k;
    Decl(std::string path, KeyType type, std::string doc) {
        k.path = std::move(path);
        k.type = type;
        k.doc = std::move(doc);
        if (type == KeyType::Integer || type == KeyType::IntegerList) k.max = kMaxInt;
    }
    Decl& range(double lo, double hi = std::numeric_limits<double>::infinity()) {
        k.min = lo;
        if (hi < k.max) k.max = hi;
        return *this;
    }
    Decl& choices(std::vector<std::string> c) {
        k.choices = std::move(c);
        return *this;
    }
    Decl& unit(sim::Dimension d) {
        k.unit = d;
        return *this;
    }
    Decl& required() {
        k.required = true;
        k.default_text = "required";
        return *this;
    }
    Decl& shown_as(std::string type) {
        k.shown_type = std::move(type);
        return *this;
    }
    Decl& by_default(std::string text) {
        k.default_text = std::move(text);
        return *this;
    }
    operator KeyInfo() const { return k; }
};

inline std::string format_quantity(double v, sim::Dimension d) {
    char buf[64];
    if (d == sim::Dimension::Bytes) std::snprintf(buf, sizeof buf, "%g GB", v / 1e9);
    else std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// Fills each key's shown default from a default-constructed target where it is a plain value.
template <typename T>
std::vector<Key<T>> finish(std::vector<Key<T>> keys) {
    const T defaults{};
    for (auto& key : keys) {
        if (!key.info.default_text.empty()) continue;
        const KeyValue v = key.get(defaults);
        key.info.default_text =
            key.info.type == KeyType::Quantity ? format_quantity(std::get<double>(v), key.info.unit) : format_value(v);
    }
    return keys;
}

template <typename R>
std::vector<std::string> registry_names(const R& reg) {
    std::vector<std::string> out;
    for (const auto& e : reg.entries()) out.push_back(e.name);
    return out;
}

}  // namespace fathom::plans::key_decl
