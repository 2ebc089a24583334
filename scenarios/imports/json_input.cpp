#include "scenarios/imports/json_input.h"

#include <algorithm>

namespace fathom::scenarios::imports {
namespace {

// Python's json.dumps writes an infinite request rate as the bare word Infinity and a missing
// statistic as NaN, which JSON lacks: read as the string "inf" and null (outside strings only).
std::string without_infinity(const std::string& text) {
    std::string out;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
        if (!in_string && text.compare(i, 8, "Infinity") == 0) {
            out += "\"inf\"";
            i += 7;
            continue;
        }
        if (!in_string && text.compare(i, 3, "NaN") == 0) {
            out += "null";
            i += 2;
            continue;
        }
        out += c;
    }
    return out;
}

}  // namespace

nlohmann::json parse_json(const Source& file, const std::string& text, int first_line) {
    try {
        return nlohmann::json::parse(without_infinity(text));
    } catch (const nlohmann::json::parse_error& e) {
        int line = first_line;
        for (size_t i = 0; i < std::min<size_t>(e.byte, text.size()); ++i) line += text[i] == '\n';
        fail(file, "", std::string("malformed JSON: ") + e.what(), line);
    }
}

}  // namespace fathom::scenarios::imports
