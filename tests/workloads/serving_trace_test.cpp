// Serving traces: CSV and JSONL read as a stream, strictly (every bad row named by file, line and
// field), with quoted cells, CRLF and a byte order mark accepted.
#include "sim/error.h"
#include "tests/support/traffic_fixture.h"
#include "workloads/serving/traffic/traffic.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fathom::workloads::serving;
using fathom::sim::InputError;
using fathom::testing::all;
using fathom::testing::scratch;
using fathom::testing::write_file;

namespace {

const std::string kTraces = std::string(FATHOM_SOURCE_DIR) + "/tests/data/traces/";

// Reads a trace to its end; the InputError's text, or "no error".
std::string first_error(const std::string& path) {
    try {
        auto s = open_trace(path);
        while (s->next()) {}
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

// ---- traces --------------------------------------------------------------------------------------

TEST_CASE("traces stream from CSV and JSONL", "[traffic]") {
    auto csv = open_trace(kTraces + "good.csv");
    CHECK(csv->slo_classes() == std::vector<std::string>{"default"});  // nothing read yet
    const auto c = all(*csv);
    REQUIRE(c.size() == 3);
    CHECK(c[0].id == 0);
    CHECK(c[0].arrival_s == 0);
    CHECK(c[0].prompt_tokens == 100);
    CHECK(c[0].output_tokens == 10);
    CHECK(c[0].prefix_group == 1);
    CHECK(c[0].prefix_tokens == 64);
    CHECK(c[1].id == 1);
    CHECK(c[1].arrival_s == 0.5);
    CHECK(c[1].prefix_group == 0);  // empty optional cells: none
    CHECK(c[1].prefix_tokens == 0);
    CHECK(c[2].arrival_s == 0.5);  // equal times are allowed
    // SLO classes in order of first appearance after "default".
    CHECK(csv->slo_classes() == std::vector<std::string>{"default", "chat", "batch"});
    CHECK(c[0].slo_class == 1);
    CHECK(c[1].slo_class == 2);
    CHECK(c[2].slo_class == 1);

    // Columns in another order, arrival_ms, quoted cells, a blank line, the largest uint64 key.
    const auto q = all(*open_trace(kTraces + "good_quoted.csv"));
    REQUIRE(q.size() == 3);
    CHECK(q[0].arrival_s == 0);
    CHECK(q[0].prompt_tokens == 120);
    CHECK(q[0].session == 5);
    CHECK(q[1].arrival_s == 0.25);  // 250 ms
    CHECK(q[1].session_tokens == 30);
    CHECK(q[1].prefix_group == 18446744073709551615ull);
    CHECK(q[1].prefix_tokens == 16);
    CHECK(q[2].id == 2);
    CHECK(q[2].session == 0);
    CHECK(q[2].slo_class == 0);  // no slo_class: default
    auto quoted = open_trace(kTraces + "good_quoted.csv");
    all(*quoted);
    CHECK(quoted->slo_classes() == std::vector<std::string>{"default", "interactive", "batch, \"low\" priority"});

    auto js = open_trace(kTraces + "good.jsonl");
    const auto j = all(*js);  // a blank line between the two rows
    REQUIRE(j.size() == 2);
    CHECK(j[0].arrival_s == 0);
    CHECK(j[1].arrival_s == 0.25);  // 250 ms
    CHECK(j[1].session == 7);
    CHECK(j[1].session_tokens == 20);
    CHECK(js->slo_classes() == std::vector<std::string>{"default"});

    // 100.0 is an integral number, null is absent, the largest uint64 session key.
    auto full = open_trace(kTraces + "good_full.jsonl");
    const auto f = all(*full);
    REQUIRE(f.size() == 2);
    CHECK(f[0].prompt_tokens == 100);
    CHECK(f[0].prefix_group == 3);
    CHECK(f[0].prefix_tokens == 40);
    CHECK(f[0].slo_class == 1);
    CHECK(f[1].arrival_s == 1.25);
    CHECK(f[1].prefix_group == 0);
    CHECK(f[1].session == 18446744073709551615ull);
    CHECK(full->slo_classes() == std::vector<std::string>{"default", "chat"});
}

TEST_CASE("a trace without requests is an input error, CRLF line ends and a byte order mark are read", "[traffic]") {
    // Empty, a header alone, blank lines alone: no request to serve, so no metric to report.
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"empty.csv", ""},
             {"header_only.csv", "arrival_s,prompt_tokens,output_tokens\n"},
             {"empty.jsonl", "\n\n"}}) {
        const auto path = write_file(name, text);
        CHECK_THROWS_WITH(all(*open_trace(path)),
                          Catch::Contains(name) && Catch::Contains("the trace holds no requests"));
    }
    const auto r = all(*open_trace(write_file("crlf.CSV",
                                              "\xEF\xBB\xBF"
                                              "arrival_s,prompt_tokens,output_tokens\r\n1.5,7,3\r\n")));
    REQUIRE(r.size() == 1);
    CHECK(r[0].arrival_s == 1.5);
    CHECK(r[0].prompt_tokens == 7);
    CHECK(r[0].output_tokens == 3);
}

TEST_CASE("bad trace rows name the file, the line and the field", "[traffic]") {
    struct Bad {
        std::string name, text;
        int line;
        std::string field, says;  // field: "key '<name>'", or the text naming the columns
    };
    const std::string h = "arrival_s,prompt_tokens,output_tokens\n";
    const std::string hp = "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens,session,session_tokens\n";
    const std::vector<Bad> bad = {
        {"not_a_number.csv", h + "0,100,10\nabc,100,10\n", 3, "key 'arrival_s'", "expected a number, got 'abc'"},
        {"trailing_text.csv", h + "0,100,10\n1,16abc,10\n", 3, "key 'prompt_tokens'",
         "expected an integer, got '16abc'"},
        {"not_integer.csv", h + "0,100,1.5\n", 2, "key 'output_tokens'", "expected an integer, got '1.5'"},
        {"negative_time.csv", h + "-1,100,10\n", 2, "key 'arrival_s'", "must be >= 0"},
        {"nan_time.csv", h + "nan,100,10\n", 2, "key 'arrival_s'", "finite"},
        {"inf_time.csv", "arrival_ms,prompt_tokens,output_tokens\n0,1,1\ninf,100,10\n", 3, "key 'arrival_ms'",
         "finite"},
        {"decreasing.csv", h + "1.0,100,10\n\n0.5,100,10\n", 4, "key 'arrival_s'", "must not decrease"},
        {"zero_prompt.csv", h + "0,0,10\n", 2, "key 'prompt_tokens'", "must be >= 1"},
        {"zero_output.csv", h + "0,10,-2\n", 2, "key 'output_tokens'", "must be >= 1"},
        {"missing_value.csv", h + "0,,10\n", 2, "key 'prompt_tokens'", "missing value"},
        {"overflow.csv", h + "0,9223372036854775808,10\n", 2, "key 'prompt_tokens'", "does not fit a 64-bit integer"},
        // Fits int64 but not the 2^53 bound (prompt + output wrapped past max_model_len).
        {"near_int64.csv", h + "0,9223372036854775800,100\n", 2, "key 'prompt_tokens'",
         "must be <= 2^53 (9007199254740992), got 9223372036854775800"},
        {"key_overflow.csv", hp + "0,100,10,18446744073709551616,10,,\n", 2, "key 'prefix_group'", "does not fit"},
        {"negative_key.csv", hp + "0,100,10,,,-1,0\n", 2, "key 'session'", "expected an integer >= 0"},
        {"prefix_too_long.csv", hp + "0,100,10,1,101,,\n", 2, "key 'prefix_tokens'", "exceed prompt_tokens (100)"},
        {"history_too_long.csv", hp + "0,100,10,1,60,4,41\n", 2, "key 'session_tokens'", "exceed prompt_tokens (100)"},
        {"prefix_no_group.csv", hp + "0,100,10,0,10,,\n", 2, "key 'prefix_tokens'", "needs a prefix_group"},
        {"too_many_cells.csv", h + "0,100,10\n1,100,10,5\n", 3, "arrival_s, prompt_tokens, output_tokens", "got 4"},
        {"too_few_cells.csv", h + "0,100\n", 2, "arrival_s, prompt_tokens, output_tokens", "got 2"},
        {"unknown_column.csv", "arrival_s,prompt_tokens,output_tokens,colour\n0,1,1,red\n", 1, "key 'colour'",
         "unknown column 'colour'"},
        {"twice.csv", "arrival_s,prompt_tokens,output_tokens,prompt_tokens\n", 1, "key 'prompt_tokens'",
         "appears twice"},
        {"no_output.csv", "arrival_s,prompt_tokens\n0,1\n", 1, "key 'output_tokens'", "missing column output_tokens"},
        {"two_times.csv", "arrival_s,arrival_ms,prompt_tokens,output_tokens\n", 1, "key 'arrival_s'", "not both"},
        {"unterminated.csv", "arrival_s,prompt_tokens,output_tokens,slo_class\n0,1,1,\"chat\n", 2, "key 'slo_class'",
         "unterminated quote in column 4"},
        {"malformed.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}\n{\"arrival_s\": 1,\n", 2,
         "JSON", "malformed JSON"},
        {"unknown_field.jsonl", "\n{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1, \"colour\": 1}\n", 2,
         "key 'colour'", "unknown field 'colour'"},
        {"string_number.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": \"100\", \"output_tokens\": 1}\n", 1,
         "key 'prompt_tokens'", "expected a number, got string"},
        {"not_object.jsonl", "[0, 100, 10]\n", 1, "JSON", "must be a JSON object"},
        {"missing_field.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 100}\n", 1, "key 'output_tokens'",
         "missing value"},
        {"no_time.jsonl", "{\"prompt_tokens\": 100, \"output_tokens\": 1}\n", 1, "key 'arrival_s'", "missing value"},
        {"fraction.jsonl", "{\"arrival_ms\": 5, \"prompt_tokens\": 100.5, \"output_tokens\": 1}\n", 1,
         "key 'prompt_tokens'", "expected an integer, got '100.5'"},
        {"decreasing.jsonl",
         "{\"arrival_ms\": 5, \"prompt_tokens\": 1, \"output_tokens\": 1}\n"
         "{\"arrival_ms\": 4, \"prompt_tokens\": 1, \"output_tokens\": 1}\n",
         2, "key 'arrival_ms'", "must not decrease"},
        {"both_times.jsonl", "{\"arrival_s\": 0, \"arrival_ms\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}\n", 1,
         "key 'arrival_s'", "not both"},
        {"boolean.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": true}\n", 1,
         "key 'output_tokens'", "expected a number, got boolean"},
        {"huge.jsonl", "{\"arrival_s\": 1e400, \"prompt_tokens\": 1, \"output_tokens\": 1}\n", 1, "JSON",
         "number overflow"},
        {"huge_time.csv", h + "1e400,1,1\n", 2, "key 'arrival_s'", "out of range"},
        {"slo_number.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1, \"slo_class\": 2}\n", 1,
         "key 'slo_class'", "expected a name"},
    };
    for (const auto& b : bad) {
        INFO(b.name);
        const std::string what = first_error(write_file(b.name, b.text));
        CHECK_THAT(what, Catch::Contains(b.name + ":" + std::to_string(b.line) + ": ") && Catch::Contains(b.field) &&
                             Catch::Contains(b.says));
    }
    // The committed bad traces (the CLI tests use bad_order.csv).
    CHECK_THAT(first_error(kTraces + "bad_number.csv"),
               Catch::Contains("bad_number.csv:3: key 'prompt_tokens'") && Catch::Contains("16abc"));
    CHECK_THAT(first_error(kTraces + "bad_order.csv"),
               Catch::Contains("bad_order.csv:3: key 'arrival_s'") && Catch::Contains("must not decrease"));
    CHECK_THAT(first_error(kTraces + "bad_negative.csv"),
               Catch::Contains("bad_negative.csv:2: key 'arrival_s'") && Catch::Contains(">= 0"));
    CHECK_THAT(first_error(kTraces + "bad_column.csv"),
               Catch::Contains("bad_column.csv:1: key 'colour'") && Catch::Contains("unknown column 'colour'"));
    CHECK_THAT(first_error(kTraces + "bad_json.jsonl"),
               Catch::Contains("bad_json.jsonl:2: ") && Catch::Contains("malformed JSON"));
    // A file that is not there, or not a trace by its extension.
    REQUIRE_THROWS_WITH(open_trace(kTraces + "no_such_trace.csv"),
                        Catch::Contains("no_such_trace.csv") && Catch::Contains("cannot open"));
    const auto dir = scratch() / "a_directory.csv";
    std::filesystem::create_directories(dir);
    REQUIRE_THROWS_WITH(open_trace(dir.string()), Catch::Contains("cannot open the trace: it is a directory"));
    REQUIRE_THROWS_WITH(open_trace(kTraces + "good.txt"),
                        Catch::Contains("good.txt") && Catch::Contains(".csv or .jsonl"));
    // Errors come row by row: the good rows before a bad one are delivered first.
    auto s = open_trace(write_file("late_error.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n1,1,1\n2,x,1\n"));
    CHECK(s->next());
    CHECK(s->next());
    CHECK_THROWS_AS(s->next(), InputError);
}

TEST_CASE("trace requests carry their line, a trace past max_requests is refused at its row", "[traffic]") {
    // Lines 2 and 4 (a blank line 3 between): each request knows where it came from.
    const std::string path = write_file("lines.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n\n1,1,1\n2,1,1\n");
    auto s = open_trace(path, 2);
    CHECK(s->next()->line == 2);
    CHECK(s->next()->line == 4);
    CHECK_THROWS_WITH(s->next(), Catch::Contains("lines.csv:5: the trace holds more than 2 requests") &&
                                     Catch::Contains("--max-requests"));
    CHECK(all(*open_trace(path, 3)).size() == 3);  // exactly at the limit
}

TEST_CASE("a long trace streams row by row", "[traffic]") {
    // 200k rows: request i arrives at i ms with prompt 100 + i % 7 and output 1 + i % 5. Times are
    // written in milliseconds (integers) so every row reads back exactly.
    const std::string path = (scratch() / "long_200k.csv").string();
    {
        std::ofstream f(path);
        f << "arrival_ms,prompt_tokens,output_tokens\n";
        for (int i = 0; i < 200000; ++i) f << i << ',' << 100 + i % 7 << ',' << 1 + i % 5 << '\n';
    }
    auto s = open_trace(path);
    int64_t n = 0;
    Request last;
    while (auto r = s->next()) {
        last = *r;
        ++n;
    }
    CHECK(n == 200000);
    CHECK(last.id == 199999);
    CHECK(last.arrival_s == 199999 / 1e3);
    CHECK(last.prompt_tokens == 100 + 199999 % 7);
    CHECK(last.output_tokens == 1 + 199999 % 5);
    std::filesystem::remove(path);
}
