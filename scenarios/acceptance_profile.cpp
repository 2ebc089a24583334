// Speculative decoding's acceptance profiles (workloads/acceptance/*.yaml, plans::AcceptanceProfileSpec).
#include "scenarios/catalog.h"

#include <charconv>
#include <cmath>

namespace fathom::scenarios {

plans::AcceptanceProfileSpec parse_acceptance_profile(const Node& n) {
    n.allow_only({"kind", "id", "name", "target", "method", "dataset", "positions"});
    plans::AcceptanceProfileSpec a;
    a.id = n.str("id");
    a.name = n.str("name");
    a.target = n.str("target");
    a.method = n.str("method");
    a.dataset = n.str("dataset");
    const Node p = n.child("positions");
    if (!p.is_map()) n.fail("positions", "expected {value: [rates by draft position], source: \"...\"}");
    p.allow_only({"value", "source"});
    a.source = p.str("source");
    if (a.source.empty()) p.fail("source", "empty source");
    double before = 1;
    for (const Node& item : p.child("value").items()) {
        const std::string text = item.scalar();
        double v = 0;
        const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
        if (res.ec != std::errc() || res.ptr != text.data() + text.size() || !std::isfinite(v))
            p.fail("value", "expected a number, got '" + text + "'");
        if (v < 0 || v > 1) p.fail("value", "a share of verifications must be between 0 and 1, got " + text);
        if (v > before)
            p.fail("value", "rates by position must not rise (a draft is accepted only after the ones before it): " +
                                text + " after " + std::to_string(before));
        before = v;
        a.positions.push_back(v);
    }
    if (a.positions.empty()) p.fail("value", "no positions");
    return a;
}

}  // namespace fathom::scenarios
