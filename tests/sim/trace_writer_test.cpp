// sim::TraceWriter: Chrome trace-event JSON, counters included, times in exact microseconds.
#include "sim/trace_writer.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace fathom::sim;

TEST_CASE("trace writer: counter events carry their values at an exact time", "[sim][trace]") {
    std::ostringstream out;
    TraceWriter w(out);
    w.process_name(3, "replica \"3\"");
    w.complete(3, 0, "iteration", Time::from_ps(1500000), Time::from_ps(2000001), {{"decodes", 7}});
    w.counter(3, "kv_blocks", Time::from_ps(3500001), {{"used", 42}, {"free", -1}});
    w.close();
    w.close();  // once
    const std::string text = out.str();
    // Picoseconds are exact: 3,500,001 ps is 3.500001 us.
    CHECK(text.find("\"ts\":3.500001") != std::string::npos);
    const auto doc = nlohmann::json::parse(text);
    CHECK(doc["displayTimeUnit"] == "ms");
    const auto& ev = doc["traceEvents"];
    REQUIRE(ev.size() == 3);
    CHECK(ev[0]["ph"] == "M");
    CHECK(ev[0]["args"]["name"] == "replica \"3\"");
    CHECK(ev[1]["ph"] == "X");
    CHECK(ev[1]["ts"] == Approx(1.5));
    CHECK(ev[1]["dur"] == Approx(2.000001));
    CHECK(ev[1]["args"]["decodes"] == 7);
    const auto& c = ev[2];
    CHECK(c["ph"] == "C");
    CHECK(c["pid"] == 3);
    CHECK(c["name"] == "kv_blocks");
    CHECK(c["ts"] == Approx(3.500001));
    CHECK(c["args"]["used"] == 42);
    CHECK(c["args"]["free"] == -1);
    CHECK_FALSE(c.contains("tid"));  // a counter is a track of its process
}
