#pragma once
// Text fathom prints: what is wrong with text from the input (names, ids, class names), and numbers
// in messages.
#include <cstdio>
#include <string>

namespace fathom::sim {

// The length of the UTF-8 sequence at byte i of s (1 to 4), or 0 when the bytes there are not one.
inline size_t utf8_sequence(const std::string& s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    // RFC 3629: no 0xC0/0xC1 (overlong) or 0xF5-0xF7 (past U+10FFFF) leads (libfyaml 0.7.12 loops
    // for ever on an 0xF6 in a directive line, found by fuzz_measured).
    const size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : (c >> 4) == 0xe ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t j = 1; ok && j < n; ++j) ok = (static_cast<unsigned char>(s[i + j]) >> 6) == 0x2;
    // RFC 3629's second-byte ranges: no overlong 3- or 4-byte forms (E0 80-9F, F0 80-8F), no
    // surrogates (ED A0-BF), nothing past U+10FFFF (F4 90-BF). libfyaml 0.8 loops for ever on an
    // overlong F0 85 in a directive line (found by fuzz_scenario).
    if (ok && n >= 3) {
        const auto b = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xe0 && b < 0xa0) && !(c == 0xed && b > 0x9f) && !(c == 0xf0 && b < 0x90) &&
             !(c == 0xf4 && b > 0x8f);
    }
    return ok ? n : 0;
}

// A control character (an escape sequence would reach the terminal raw) or bytes that are not
// UTF-8 (JSON writers refuse them): the problem, naming the byte; "" when the text is fine.
inline std::string text_problem(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "a control character (\\x%02x) at byte %zu: names are plain text", c, i);
            return buf;
        }
        const size_t n = utf8_sequence(s, i);
        if (n == 0) return "not UTF-8 at byte " + std::to_string(i) + ": names are UTF-8 text";
        i += n;
    }
    return "";
}

// A number in at most 6 significant digits (1.2e+300, not 300 digits of std::to_string).
inline std::string short_number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

}  // namespace fathom::sim
