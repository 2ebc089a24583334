#include "scenarios/yaml_guard.h"

#include "sim/error.h"
#include "sim/text.h"

#include <libfyaml.h>

#include <memory>
#include <regex>
#include <vector>

namespace fathom::scenarios {

namespace {

struct ParserDeleter {
    void operator()(fy_parser* p) const { fy_parser_destroy(p); }
};
struct DiagDeleter {
    void operator()(fy_diag* d) const { fy_diag_destroy(d); }
};

// libfyaml's first error, "<input>:LINE:COLUMN: error: REASON" followed by the source line, as
// (line, "column C: REASON").
std::pair<int, std::string> first_error(const std::string& diagnostics) {
    static const std::regex error(R"(:(\d+):(\d+): error: ([^\n]*))");
    std::smatch m;
    if (!std::regex_search(diagnostics, m, error)) return {0, "malformed YAML"};
    // An unterminated double quote reads as a quoted scalar running on over the lines below it.
    const std::string why = m[3].str();
    const bool quote =
        why.find("wrongly indented") != std::string::npos && why.find("quoted scalar") != std::string::npos;
    const int line = std::stoi(m[1].str().substr(0, 9));  // 9 digits at most: stoi cannot overflow
    return {line, "malformed YAML at column " + m[2].str() + ": " + why + (quote ? " (a closing quote missing?)" : "")};
}

// The first byte of `text` that is not part of a UTF-8 sequence, as (line, column), or (0, 0).
std::pair<int, int> first_non_utf8(const std::string& text) {
    int line = 1, column = 1;
    for (size_t i = 0; i < text.size();) {
        const size_t n = sim::utf8_sequence(text, i);
        if (n == 0) return {line, column};
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
        i += n;
    }
    return {0, 0};
}

}  // namespace

void check_yaml_syntax(const std::string& text, const std::string& name) {
    // YAML is Unicode text. Checked first: libfyaml 0.7.12 loops for ever on a byte that is not
    // UTF-8 in a directive line ("% x\xf9", found by fuzz_measured).
    if (const auto [line, column] = first_non_utf8(text); line > 0) {
        throw sim::InputError("not UTF-8 text at column " + std::to_string(column) + ": YAML files are UTF-8", name,
                              line);
    }
    std::string diagnostics;
    fy_diag_cfg dc;
    fy_diag_cfg_default(&dc);
    dc.fp = nullptr;
    dc.user = &diagnostics;
    dc.output_fn = [](fy_diag*, void* user, const char* buf, size_t len) {
        static_cast<std::string*>(user)->append(buf, len);
    };
    dc.level = FYET_ERROR;
    dc.colorize = false;
    dc.show_source = false;
    dc.show_type = false;
    dc.show_module = false;
    dc.show_position = true;
    const std::unique_ptr<fy_diag, DiagDeleter> diag(fy_diag_create(&dc));
    fy_parse_cfg cfg{};
    cfg.flags = FYPCF_QUIET;
    cfg.diag = diag.get();
    const std::unique_ptr<fy_parser, ParserDeleter> parser(fy_parser_create(&cfg));
    if (!diag || !parser || fy_parser_set_string(parser.get(), text.data(), text.size()) != 0)
        throw sim::InternalError("libfyaml: cannot create a parser");
    // The open collections: where each started, and whether it is a flow one ([...] or {...}).
    struct Open {
        int line, column;
        bool flow;
    };
    std::vector<Open> open;
    while (fy_event* e = fy_parser_parse(parser.get())) {
        const fy_event_type type = e->type;
        const fy_mark* at = fy_event_start_mark(e);
        const int line = at ? at->line + 1 : 0, column = at ? at->column + 1 : 0;
        const bool flow = fy_event_get_node_style(e) == FYNS_FLOW;
        fy_parser_event_free(parser.get(), e);
        if (type == FYET_MAPPING_START || type == FYET_SEQUENCE_START) {
            open.push_back({line, column, flow});
            if (open.size() > kMaxYamlDepth)
                throw sim::InputError("YAML nested deeper than " + std::to_string(kMaxYamlDepth) +
                                          " levels (at column " + std::to_string(column) + ")",
                                      name, line);
        } else if ((type == FYET_MAPPING_END || type == FYET_SEQUENCE_END) && !open.empty()) {
            open.pop_back();
        }
    }
    if (fy_parser_get_stream_error(parser.get())) {
        auto [line, why] = first_error(diagnostics);
        // A flow collection left open runs on into the lines below it, where the parser fails:
        // say where it opened (an unclosed `[16, 16` on line 11 failed on line 13).
        if (!open.empty() && open.back().flow && open.back().line < line)
            why += " (in the flow collection opened at line " + std::to_string(open.back().line) + ", column " +
                   std::to_string(open.back().column) + ")";
        throw sim::InputError(why, name, line);
    }
}

}  // namespace fathom::scenarios
