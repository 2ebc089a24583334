// Streaming trace readers (CSV with a header row, or JSONL): one line per next() call, validated
// strictly; every error names the file, the line and the field (see open_trace in traffic.h).
#include "sim/error.h"
#include "sim/input_file.h"
#include "sim/text.h"
#include "sim/time.h"
#include "workloads/serving/traffic/traffic.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

namespace fathom::workloads::serving {
namespace {

// The fields of a row, in the order of the documentation.
enum Field : size_t {
    kArrivalS,
    kArrivalMs,
    kPromptTokens,
    kOutputTokens,
    kPrefixGroup,
    kPrefixTokens,
    kSession,
    kSessionTokens,
    kSloClass,
    kAdapter,
    kFieldCount
};
constexpr std::array<const char*, kFieldCount> kFieldNames = {
    "arrival_s",     "arrival_ms", "prompt_tokens",  "output_tokens", "prefix_group",
    "prefix_tokens", "session",    "session_tokens", "slo_class",     "adapter"};
const char* const kKnownFields =
    "arrival_s, arrival_ms, prompt_tokens, output_tokens, prefix_group, prefix_tokens, session, session_tokens, "
    "slo_class, adapter";

std::optional<Field> field_named(std::string_view name) {
    for (size_t f = 0; f < kFieldCount; ++f)
        if (name == kFieldNames[f]) return static_cast<Field>(f);
    return std::nullopt;
}

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The shortest text that reads back as `v` (0.5, not 0.500000).
std::string shortest(double v) {
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

// One row's values as text, by field (absent: nullopt). An empty value means "none" for an
// optional field and "missing" for a required one.
using Row = std::array<std::optional<std::string_view>, kFieldCount>;

class TraceSource : public RequestSource {
public:
    TraceSource(std::string path, int64_t max_requests)
        : path_(std::move(path)), in_(sim::open_input(path_, "trace")), max_requests_(max_requests) {}
    const std::vector<std::string>& slo_classes() const override { return classes_; }

protected:
    [[noreturn]] void fail(const std::string& field, const std::string& message) const {
        throw sim::InputError(message, path_, line_, field);
    }
    [[noreturn]] void fail(Field f, const std::string& message) const { fail(kFieldNames[f], message); }

    // The next non-blank line (without its line break and a leading byte order mark), or false at
    // the end of the file. Counts every line, blank ones included, for the error messages.
    bool next_line(std::string& out) {
        while (std::getline(in_, out)) {
            if (line_ == std::numeric_limits<int>::max()) fail("", "more lines than a trace may hold (2^31 - 1)");
            ++line_;
            if (!out.empty() && out.back() == '\r') out.pop_back();
            if (line_ == 1) sim::strip_bom(out);
            if (!trim(out).empty()) return true;
        }
        if (in_.bad()) fail("", "read error");
        return false;
    }

    // The end of the trace: nullopt, or an input error when it held no request at all (a serving
    // run of no requests has no latency, throughput or SLO attainment to report).
    std::optional<Request> end() const {
        if (next_id_ == 0) fail("", "the trace holds no requests");
        return std::nullopt;
    }

    // Builds and validates the request of one row and gives it the next id.
    Request build(const Row& row) {
        if (next_id_ == max_requests_)
            fail("", "the trace holds more than " + std::to_string(max_requests_) +
                         " requests, the most a simulation may hold (about 400 bytes each; raise it with "
                         "--max-requests)");
        Request r;
        r.line = line_;
        const bool has_s = present(row[kArrivalS]), has_ms = present(row[kArrivalMs]);
        if (has_s && has_ms) fail(kArrivalS, "give arrival_s or arrival_ms, not both");
        if (!has_s && !has_ms) fail(kArrivalS, "missing value (arrival_s or arrival_ms)");
        const Field time = has_s ? kArrivalS : kArrivalMs;
        const double t = number(time, *row[time]);
        if (t < 0) fail(time, "arrival time must be >= 0, got " + std::string(*row[time]));
        r.arrival_s = has_s ? t : t / 1e3;
        if (!sim::Time::in_range(r.arrival_s))
            fail(time, "arrival time " + sim::short_number(r.arrival_s) +
                           " s is past the range of simulated time (about 106 days)");
        if (r.arrival_s < last_arrival_s_)
            fail(time, "arrival times must not decrease (" + shortest(r.arrival_s) + " s after " +
                           shortest(last_arrival_s_) + " s on the row before)");
        last_arrival_s_ = r.arrival_s;

        r.prompt_tokens = count(row, kPromptTokens, 1, true);
        r.output_tokens = count(row, kOutputTokens, 1, true);
        r.prefix_group = key(row, kPrefixGroup);
        r.prefix_tokens = count(row, kPrefixTokens, 0, false);
        r.session = key(row, kSession);
        r.session_tokens = count(row, kSessionTokens, 0, false);
        if (r.prefix_tokens > 0 && r.prefix_group == 0)
            fail(kPrefixTokens, "prefix_tokens > 0 needs a prefix_group (not 0)");
        if (r.session_tokens > 0 && r.session == 0) fail(kSessionTokens, "session_tokens > 0 needs a session (not 0)");
        if (r.prefix_tokens > r.prompt_tokens || r.session_tokens > r.prompt_tokens - r.prefix_tokens)
            fail(r.prefix_tokens > r.prompt_tokens ? kPrefixTokens : kSessionTokens,
                 "prefix_tokens (" + std::to_string(r.prefix_tokens) + ") + session_tokens (" +
                     std::to_string(r.session_tokens) + ") exceed prompt_tokens (" + std::to_string(r.prompt_tokens) +
                     ")");
        if (present(row[kSloClass])) r.slo_class = slo_class(std::string(*row[kSloClass]));
        if (present(row[kAdapter])) {  // multi-LoRA: 1..serving.lora.adapters, 0 the base model
            const int64_t a = count(row, kAdapter, 0, true);
            if (a > std::numeric_limits<int32_t>::max()) fail(kAdapter, "adapter id past 2^31 - 1");
            r.adapter = static_cast<int32_t>(a);
        }
        r.id = next_id_++;
        return r;
    }

private:
    static bool present(const std::optional<std::string_view>& v) { return v && !v->empty(); }

    // A finite decimal number (strict: the whole text, no leading '+', locale-independent).
    double number(Field f, std::string_view text) const {
        double v = 0;
        const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
        if (res.ec == std::errc::result_out_of_range) fail(f, "number out of range: '" + std::string(text) + "'");
        if (res.ec != std::errc() || res.ptr != text.data() + text.size())
            fail(f, "expected a number, got '" + std::string(text) + "'");
        if (!std::isfinite(v)) fail(f, "expected a finite number, got '" + std::string(text) + "'");
        return v;
    }

    // A token count: an int64 >= `least`; a required field must be there, an optional one is 0
    // when absent or empty.
    int64_t count(const Row& row, Field f, int64_t least, bool required) const {
        if (!present(row[f])) {
            if (required) fail(f, "missing value");
            return 0;
        }
        const std::string_view text = *row[f];
        int64_t v = 0;
        const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
        if (res.ec == std::errc::result_out_of_range)
            fail(f, "'" + std::string(text) + "' does not fit a 64-bit integer");
        if (res.ec != std::errc() || res.ptr != text.data() + text.size())
            fail(f, "expected an integer, got '" + std::string(text) + "'");
        if (v < least) fail(f, "must be >= " + std::to_string(least) + ", got " + std::to_string(v));
        // Counts are summed (prompt + output, prefix + session): bounded at 2^53 as the generators'
        // draws are, no sum overflows (a prompt of 2^63 - 8 tokens wrapped past max_model_len and
        // its request vanished from the results) and every count is exact as a double.
        if (v > kMaxRequestTokens)
            fail(f, "must be <= 2^53 (" + std::to_string(kMaxRequestTokens) + "), got " + std::to_string(v));
        return v;
    }

    // A prefix group or session key: a uint64 (0 or absent: none).
    uint64_t key(const Row& row, Field f) const {
        if (!present(row[f])) return 0;
        const std::string_view text = *row[f];
        uint64_t v = 0;
        const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
        if (res.ec == std::errc::result_out_of_range)
            fail(f, "'" + std::string(text) + "' does not fit a 64-bit unsigned integer");
        if (res.ec != std::errc() || res.ptr != text.data() + text.size())
            fail(f, "expected an integer >= 0, got '" + std::string(text) + "'");
        return v;
    }

    // Index of an SLO class name, adding it on first appearance.
    int32_t slo_class(const std::string& name) {
        auto it = std::find(classes_.begin(), classes_.end(), name);
        if (it == classes_.end()) {
            if (const std::string why = sim::text_problem(name); !why.empty()) fail(kSloClass, why);
            if (classes_.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max()))
                fail(kSloClass, "too many SLO classes");
            classes_.push_back(name);
            it = classes_.end() - 1;
        }
        return static_cast<int32_t>(it - classes_.begin());
    }

    std::string path_;
    std::ifstream in_;
    int line_ = 0;
    double last_arrival_s_ = 0;
    int64_t max_requests_;
    int64_t next_id_ = 0;
    std::vector<std::string> classes_{"default"};
};

class CsvTrace final : public TraceSource {
public:
    CsvTrace(std::string path, int64_t max_requests) : TraceSource(std::move(path), max_requests) {
        if (!next_line(line_text_)) return;  // empty file: no requests
        split(line_text_, cells_);
        std::array<bool, kFieldCount> seen{};
        for (size_t i = 0; i < cells_.size(); ++i) {
            const std::string name(cells_[i]);
            if (name.empty()) fail("", "column " + std::to_string(i + 1) + " of the header has no name");
            const auto f = field_named(name);
            if (!f) fail(name, "unknown column '" + name + "' (known: " + kKnownFields + ")");
            if (seen[*f]) fail(name, "column '" + name + "' appears twice");
            seen[*f] = true;
            columns_.push_back(*f);
        }
        if (seen[kArrivalS] && seen[kArrivalMs]) fail(kArrivalS, "give an arrival_s or an arrival_ms column, not both");
        if (!seen[kArrivalS] && !seen[kArrivalMs]) fail(kArrivalS, "missing column arrival_s (or arrival_ms)");
        for (Field f : {kPromptTokens, kOutputTokens})
            if (!seen[f]) fail(f, std::string("missing column ") + kFieldNames[f]);
    }

    std::optional<Request> next() override {
        if (columns_.empty() || !next_line(line_text_)) return end();
        split(line_text_, cells_);
        if (cells_.size() != columns_.size()) {
            std::string names;
            for (Field f : columns_) names += std::string(names.empty() ? "" : ", ") + kFieldNames[f];
            fail("", "expected " + std::to_string(columns_.size()) + " columns (" + names + "), got " +
                         std::to_string(cells_.size()));
        }
        Row row;
        for (size_t i = 0; i < cells_.size(); ++i) row[columns_[i]] = cells_[i];
        return build(row);
    }

private:
    // Splits a line at commas into trimmed cells (views into `line`, which is edited in place to
    // unquote): a cell may be double-quoted, with "" for a quote inside (RFC 4180 on one line).
    void split(std::string& line, std::vector<std::string_view>& out) const {
        // Names the column of a quoting error (by its header name once the header is read).
        const auto bad = [&](size_t column, const std::string& what) {
            fail(column < columns_.size() ? kFieldNames[columns_[column]] : "",
                 what + " in column " + std::to_string(column + 1));
        };
        out.clear();
        size_t i = 0;
        while (true) {
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
            if (i < line.size() && line[i] == '"') {
                // Unquote in place: the cell's text moves left over the quotes.
                const size_t begin = i;
                size_t w = i;
                ++i;
                while (true) {
                    if (i >= line.size()) bad(out.size(), "unterminated quote");
                    if (line[i] == '"') {
                        if (i + 1 < line.size() && line[i + 1] == '"') {
                            line[w++] = '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        break;
                    }
                    line[w++] = line[i++];
                }
                out.emplace_back(line.data() + begin, w - begin);
                while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
                if (i < line.size() && line[i] != ',') bad(out.size() - 1, "text after a closing quote");
            } else {
                const size_t comma = std::min(line.find(',', i), line.size());
                out.push_back(trim(std::string_view(line).substr(i, comma - i)));
                i = comma;
            }
            if (i >= line.size()) break;
            ++i;  // past the comma
        }
    }

    std::vector<Field> columns_;  // by position; empty when the file has no header
    std::string line_text_;
    std::vector<std::string_view> cells_;
};

class JsonlTrace final : public TraceSource {
public:
    using TraceSource::TraceSource;

    std::optional<Request> next() override {
        std::string line;
        if (!next_line(line)) return end();
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const nlohmann::json::parse_error& e) {
            // nlohmann's text says "parse error at line 1, column N: why"; keep the column and why.
            const std::string what = e.what();
            const auto at = what.find("column ");
            fail("", "malformed JSON" + (at == std::string::npos ? ": " + what : " at " + what.substr(at)));
        } catch (const nlohmann::json::exception& e) {  // a number beyond double's range
            fail("", std::string("malformed JSON: ") + e.what());
        }
        if (!j.is_object()) fail("", "each line must be a JSON object");
        Row row;
        std::array<std::string, kFieldCount> text;
        for (const auto& [name, v] : j.items()) {
            const auto f = field_named(name);
            if (!f) fail(name, "unknown field '" + name + "' (known: " + kKnownFields + ")");
            if (v.is_null()) continue;  // absent
            if (*f == kSloClass) {
                if (!v.is_string()) fail(*f, "expected a name (a JSON string)");
                text[*f] = v.get<std::string>();
                if (text[*f].empty()) continue;
            } else if (v.is_number_unsigned()) {
                text[*f] = std::to_string(v.get<uint64_t>());
            } else if (v.is_number_integer()) {
                text[*f] = std::to_string(v.get<int64_t>());
            } else if (v.is_number_float()) {
                // The shortest text of the double: 100.0 becomes "100" (accepted as an integer),
                // 0.25 stays "0.25".
                text[*f] = shortest(v.get<double>());
            } else {
                fail(*f, std::string("expected a number, got ") + v.type_name());
            }
            row[*f] = text[*f];
        }
        return build(row);
    }
};

}  // namespace

std::unique_ptr<RequestSource> open_trace(const std::string& path, int64_t max_requests) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".csv") return std::make_unique<CsvTrace>(path, max_requests);
    if (ext == ".jsonl") return std::make_unique<JsonlTrace>(path, max_requests);
    throw sim::InputError(
        (ext.empty() ? std::string("a trace file needs an extension") : "unknown trace extension '" + ext + "'") +
            ": expected .csv or .jsonl",
        path);
}

}  // namespace fathom::workloads::serving
