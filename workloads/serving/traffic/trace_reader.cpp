// Streaming trace readers (CSV with a header row, or JSONL): one row per next() call, validated
// strictly; every error names the file, the line and the field.
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>

#include "sim/error.h"
#include "workloads/serving/traffic/traffic.h"

namespace fathom::workloads::serving {
namespace {

const std::vector<std::string> kFields = {"arrival_s",    "arrival_ms",      "prompt_tokens",  "output_tokens", "prefix_group",
                                          "prefix_tokens", "session",        "session_tokens", "slo_class"};

class TraceSource : public RequestSource {
public:
    explicit TraceSource(std::string path) : path_(std::move(path)), in_(path_) {
        if (!in_) throw sim::InputError("cannot open the trace", path_);
    }
    const std::vector<std::string>& slo_classes() const override { return classes_; }

protected:
    [[noreturn]] void fail(const std::string& field, const std::string& message) const {
        throw sim::InputError(message, path_, line_, field);
    }
    bool next_line(std::string& out) {
        while (std::getline(in_, out)) {
            ++line_;
            if (!out.empty() && out.back() == '\r') out.pop_back();
            if (out.find_first_not_of(" \t") != std::string::npos) return true;
        }
        return false;
    }
    int64_t integer(const std::string& field, const std::string& text) const {
        int64_t v = 0;
        const char* b = text.data();
        const char* e = b + text.size();
        const auto r = std::from_chars(b, e, v);
        if (r.ec != std::errc() || r.ptr != e) fail(field, "expected an integer, got '" + text + "'");
        return v;
    }
    double number(const std::string& field, const std::string& text) const {
        if (text.empty()) fail(field, "expected a number, got nothing");
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size()) fail(field, "expected a number, got '" + text + "'");
        if (!std::isfinite(v)) fail(field, "expected a finite number, got '" + text + "'");
        return v;
    }
    // Fills `r` from field values by name (as text), validates it and assigns its id.
    Request build(const std::map<std::string, std::string>& f) {
        Request r;
        auto get = [&](const char* k) -> const std::string* {
            auto it = f.find(k);
            return it == f.end() ? nullptr : &it->second;
        };
        if (const auto* s = get("arrival_s")) r.arrival_s = number("arrival_s", *s);
        else if (const auto* ms = get("arrival_ms")) r.arrival_s = number("arrival_ms", *ms) / 1e3;
        else fail("arrival_s", "missing field (arrival_s or arrival_ms)");
        const char* tfield = get("arrival_s") ? "arrival_s" : "arrival_ms";
        if (r.arrival_s < 0) fail(tfield, "arrival time must be >= 0");
        if (r.arrival_s < last_) fail(tfield, "arrival times must not decrease (previous row: " + std::to_string(last_) + " s)");
        last_ = r.arrival_s;
        for (const char* k : {"prompt_tokens", "output_tokens"})
            if (!get(k)) fail(k, "missing field");
        r.prompt_tokens = integer("prompt_tokens", *get("prompt_tokens"));
        r.output_tokens = integer("output_tokens", *get("output_tokens"));
        if (r.prompt_tokens < 1) fail("prompt_tokens", "must be >= 1");
        if (r.output_tokens < 1) fail("output_tokens", "must be >= 1");
        auto key = [&](const char* k) -> uint64_t {
            const auto* s = get(k);
            if (!s || s->empty()) return 0;
            const int64_t v = integer(k, *s);
            if (v < 0) fail(k, "must be >= 0");
            return static_cast<uint64_t>(v);
        };
        r.prefix_group = key("prefix_group");
        r.session = key("session");
        r.prefix_tokens = static_cast<int64_t>(key("prefix_tokens"));
        r.session_tokens = static_cast<int64_t>(key("session_tokens"));
        if (r.prefix_tokens + r.session_tokens > r.prompt_tokens)
            fail("prefix_tokens", "prefix_tokens + session_tokens exceed prompt_tokens");
        if (const auto* c = get("slo_class"); c && !c->empty()) {
            auto it = std::find(classes_.begin(), classes_.end(), *c);
            if (it == classes_.end()) {
                classes_.push_back(*c);
                it = classes_.end() - 1;
            }
            r.slo_class = static_cast<int32_t>(it - classes_.begin());
        }
        r.id = next_id_++;
        return r;
    }

    std::string path_;
    std::ifstream in_;
    int line_ = 0;
    double last_ = 0;
    int64_t next_id_ = 0;
    std::vector<std::string> classes_{"default"};
};

class CsvTrace final : public TraceSource {
public:
    explicit CsvTrace(std::string path) : TraceSource(std::move(path)) {
        std::string header;
        if (!next_line(header)) return;  // empty: no requests
        columns_ = split(header);
        for (const auto& c : columns_)
            if (std::find(kFields.begin(), kFields.end(), c) == kFields.end())
                fail(c, "unknown column '" + c + "' (known: arrival_s, arrival_ms, prompt_tokens, output_tokens, prefix_group, "
                        "prefix_tokens, session, session_tokens, slo_class)");
    }
    std::optional<Request> next() override {
        std::string row;
        if (columns_.empty() || !next_line(row)) return std::nullopt;
        const auto cells = split(row);
        if (cells.size() != columns_.size())
            fail("", "expected " + std::to_string(columns_.size()) + " columns, got " + std::to_string(cells.size()));
        std::map<std::string, std::string> f;
        for (size_t i = 0; i < cells.size(); ++i) f[columns_[i]] = cells[i];
        return build(f);
    }

private:
    static std::vector<std::string> split(const std::string& s) {
        std::vector<std::string> out;
        size_t start = 0;
        while (true) {
            const auto comma = s.find(',', start);
            std::string cell = s.substr(start, comma - start);
            const auto b = cell.find_first_not_of(" \t"), e = cell.find_last_not_of(" \t");
            out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        return out;
    }
    std::vector<std::string> columns_;
};

class JsonlTrace final : public TraceSource {
public:
    using TraceSource::TraceSource;
    std::optional<Request> next() override {
        std::string row;
        if (!next_line(row)) return std::nullopt;
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(row);
        } catch (const nlohmann::json::exception& e) {
            fail("", std::string("malformed JSON: ") + e.what());
        }
        if (!j.is_object()) fail("", "each line must be a JSON object");
        std::map<std::string, std::string> f;
        for (const auto& [k, v] : j.items()) {
            if (std::find(kFields.begin(), kFields.end(), k) == kFields.end()) fail(k, "unknown field '" + k + "'");
            if (v.is_string()) {
                if (k != "slo_class") fail(k, "expected a number, got a string");
                f[k] = v.get<std::string>();
            } else if (v.is_number_integer()) {
                f[k] = std::to_string(v.get<int64_t>());
            } else if (v.is_number()) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
                f[k] = buf;
            } else {
                fail(k, "expected a number");
            }
        }
        return build(f);
    }
};

}  // namespace

std::unique_ptr<RequestSource> open_trace(const std::string& path) {
    const auto dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
    if (ext == ".csv") return std::make_unique<CsvTrace>(path);
    if (ext == ".jsonl") return std::make_unique<JsonlTrace>(path);
    throw sim::InputError("a trace must be a .csv or .jsonl file", path);
}

}  // namespace fathom::workloads::serving
