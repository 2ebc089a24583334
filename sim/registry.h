#pragma once
// A registry of named alternatives (schedules, collective algorithms, cost models): each entry has
// a name, a one-line description and a factory. Registries are filled explicitly by a visible
// function of the module that owns them (no static-constructor macros). Asking for an unknown name
// throws InputError listing the valid names.
#include "sim/error.h"

#include <string>
#include <utility>
#include <vector>

namespace fathom::sim {

template <typename Factory>
class Registry {
public:
    struct Entry {
        std::string name;
        std::string description;
        Factory factory;
    };
    explicit Registry(std::string what) : what_(std::move(what)) {}
    void add(std::string name, std::string description, Factory f) {
        for (const auto& e : entries_) FATHOM_CHECK(e.name != name, "duplicate " + what_ + " '" + name + "'");
        entries_.push_back(Entry{std::move(name), std::move(description), std::move(f)});
    }
    const Entry* find(const std::string& name) const {
        for (const auto& e : entries_)
            if (e.name == name) return &e;
        return nullptr;
    }
    const Entry& get(const std::string& name) const {
        if (const Entry* e = find(name)) return *e;
        throw InputError("unknown " + what_ + " '" + name + "'; valid: " + names());
    }
    std::string names() const {
        std::string out;
        for (const auto& e : entries_) out += (out.empty() ? "" : ", ") + e.name;
        return out;
    }
    const std::vector<Entry>& entries() const { return entries_; }

private:
    std::string what_;
    std::vector<Entry> entries_;
};

}  // namespace fathom::sim
