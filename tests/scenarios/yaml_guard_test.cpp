// The YAML guard (scenarios/yaml_guard.h): libfyaml reads the text before yaml-cpp and says where
// it is malformed or too deep, with the line and column; well-formed text passes untouched.
#include "scenarios/yaml_guard.h"

#include "scenarios/yaml_node.h"
#include "sim/error.h"

#include <catch2/catch.hpp>

#include <string>

using fathom::scenarios::check_yaml_syntax;
using fathom::scenarios::load_yaml_string;
using fathom::sim::InputError;

namespace {

std::string error_of(const std::string& text) {
    try {
        check_yaml_syntax(text, "g.yaml");
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("the YAML guard locates what yaml-cpp misread", "[scenarios][yaml]") {
    // yaml-cpp read the quote opened on line 1 to the end of the file, one string, and the error
    // surfaced as a missing key.
    CHECK_THAT(
        error_of("name: \"unterminated\nkind: training\nmodel: llama3-8b\n"),
        Catch::StartsWith("g.yaml:1: malformed YAML at column 7:") && Catch::Contains("(a closing quote missing?)"));
    CHECK_THAT(error_of("a: 'x\n"), Catch::StartsWith("g.yaml:1: malformed YAML at column 5: single-quoted scalar "
                                                      "without closing quote"));
    // An unclosed flow list fails two lines further on; the message says where it opened.
    CHECK_THAT(error_of("a:\n  b: [16, 16\n  c: 1\n  d: 2\n"),
               Catch::Contains("missing comma in flow sequence") &&
                   Catch::Contains("(in the flow collection opened at line 2, column 6)"));
    // 100,000 nested lists: refused at the 65th level (the mapping is the first, the 64th `[` at
    // column 4 + 63), without recursion (yaml-cpp said "bad file").
    const std::string deep = "a: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
    CHECK(error_of(deep) == "g.yaml:1: YAML nested deeper than 64 levels (at column 67)");
    // 64 levels are allowed: the mapping at the top and 63 lists under it.
    CHECK(error_of("a: " + std::string(63, '[') + std::string(63, ']') + "\n") == "no error");
    // Well-formed text passes, anchors, aliases, block scalars and several documents included (the
    // one-document rule is the loader's).
    CHECK(error_of("a: &x [1, 2]\nb: *x\nc: |\n  text \"with' quotes\n---\nd: 1\n") == "no error");
    // Bytes that are not UTF-8, found before libfyaml reads them (0.7.12 looped for ever on one in
    // a directive line); the column counts characters.
    CHECK(error_of("a: 1\n% x\xf9y\n") == "g.yaml:2: not UTF-8 text at column 4: YAML files are UTF-8");
    CHECK(error_of("a: \xc3\xa9\xff\n") == "g.yaml:1: not UTF-8 text at column 5: YAML files are UTF-8");
    CHECK(error_of("a: caf\xc3\xa9 \xe2\x82\xac\n") == "no error");
    // Overlong forms and surrogates are not UTF-8 either (RFC 3629): libfyaml looped for ever on an
    // overlong F0 85 85 B5 in a directive line (found by fuzz_scenario).
    CHECK(error_of("a: 1\n%%%: x\xf0\x85\x85\xb5\n") == "g.yaml:2: not UTF-8 text at column 7: YAML files are UTF-8");
    CHECK(error_of("a: \xed\xa0\x80\n") == "g.yaml:1: not UTF-8 text at column 4: YAML files are UTF-8");
    CHECK(error_of("a: \xe0\x80\xaf\n") == "g.yaml:1: not UTF-8 text at column 4: YAML files are UTF-8");
    CHECK(error_of("a: \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\n") == "no error");  // U+1F600, U+10FFFF
    // The loader runs the guard first.
    CHECK_THROWS_WITH(load_yaml_string("a: [1, 2\n", "h.yaml"), Catch::StartsWith("h.yaml:2: malformed YAML"));
}
