#include "scenarios/schema.h"

#include <algorithm>

namespace fathom::scenarios {

plans::KeyValue read_value(const Node& n, const plans::KeyInfo& k) {
    using plans::KeyType;
    const std::string name = k.name();
    plans::KeyValue v;
    switch (k.type) {
        case KeyType::Integer: v = n.integer(name); break;
        case KeyType::Number: v = n.number(name); break;
        case KeyType::Boolean: v = n.boolean(name); break;
        case KeyType::Choice:
        case KeyType::Text: v = n.str(name); break;
        case KeyType::Quantity: v = n.quantity(name, k.unit); break;
        case KeyType::ChoiceList: {
            // A YAML list (or one value); held comma-joined, each entry checked by check_value.
            const Node item = n.child(name);
            std::string joined;
            if (item.is_scalar()) joined = item.scalar();
            else
                for (const Node& x : item.items()) {
                    const std::string e = x.scalar();
                    if (e.empty() || e.find(',') != std::string::npos)
                        x.fail("", "expected one of the choices, got '" + e + "'");
                    joined += (joined.empty() ? "" : ",") + e;
                }
            v = joined;
            break;
        }
        case KeyType::IntegerList: {
            std::vector<int64_t> list;
            for (const Node& item : n.child(name).items()) {
                const std::string s = item.scalar();
                try {
                    size_t pos = 0;
                    const long long x = std::stoll(s, &pos);
                    if (pos == s.size()) {
                        list.push_back(x);
                        continue;
                    }
                } catch (const std::exception&) {}
                item.fail("", "expected an integer, got '" + s + "'");
            }
            v = std::move(list);
            break;
        }
    }
    const std::string why = plans::check_value(k, v);
    if (!why.empty()) n.fail(name, why);
    return v;
}

void check_section_keys(const Node& section, const std::string& prefix, const std::vector<std::string>& extra) {
    std::vector<std::string> allowed = extra;
    for (const plans::KeyInfo* k : plans::all_keys())
        if (k->section() == prefix) allowed.push_back(k->name());
    if (!section.is_map()) section.fail("", "expected a mapping");
    for (const std::string& key : section.keys()) {
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        // Declared in another section: say where it belongs.
        for (const plans::KeyInfo* k : plans::all_keys())
            if (k->name() == key && k->section() != prefix && !k->section().empty())
                section.fail(key,
                             "unknown key '" + key + "' here; it belongs in '" + k->section() + "' (" + k->path + ")");
    }
    section.allow_only(allowed);
}

}  // namespace fathom::scenarios
