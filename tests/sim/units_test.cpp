// Quantities with units (sim::parse_quantity): SI base-unit results, decimal vs binary prefixes,
// bits vs bytes, and the three error kinds (missing, wrong and unknown unit).
#include "sim/units.h"

#include "sim/time.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using fathom::sim::Dimension;
using fathom::sim::parse_quantity;
using fathom::sim::UnitError;

TEST_CASE("parse_quantity converts to SI base units", "[sim][units]") {
    // Decimal prefixes: G = 1e9, T = 1e12.
    CHECK(parse_quantity("80 GB", Dimension::Bytes) == Approx(80e9).epsilon(1e-15));
    CHECK(parse_quantity("3.35 TB/s", Dimension::Bandwidth) == Approx(3.35e12).epsilon(1e-15));
    // Bits: 400 Gb/s = 400e9 bit/s / 8 bit per byte = 50e9 B/s.
    CHECK(parse_quantity("400 Gb/s", Dimension::Bandwidth) == Approx(50e9).epsilon(1e-15));
    CHECK(parse_quantity("989.4 TFLOP/s", Dimension::FlopRate) == Approx(989.4e12).epsilon(1e-15));
    // 4 us = 4 x 1e-6 s.
    CHECK(parse_quantity("4 us", Dimension::Time) == Approx(4e-6).epsilon(1e-15));
    // Binary only with the "i" spelling: 1 GiB = 2^30 B exactly.
    CHECK(parse_quantity("1 GiB", Dimension::Bytes) == 1073741824.0);
    // Whitespace is optional and trimmed.
    CHECK(parse_quantity("  2GB ", Dimension::Bytes) == Approx(2e9).epsilon(1e-15));
    CHECK(parse_quantity("700 W", Dimension::Power) == 700.0);
    // Day-scale runs and file systems (issue 38).
    CHECK(parse_quantity("2 days", Dimension::Time) == 172800.0);
    CHECK(parse_quantity("1 day", Dimension::Time) == 86400.0);
    CHECK(parse_quantity("240 PB", Dimension::Bytes) == Approx(240e15).epsilon(1e-15));
}

TEST_CASE("parse_quantity rejects a missing, wrong or unknown unit", "[sim][units]") {
    CHECK_THROWS_AS(parse_quantity("80", Dimension::Bytes), UnitError);
    CHECK_THROWS_WITH(parse_quantity("80", Dimension::Bytes), Catch::Contains("missing unit"));
    // A bandwidth where a size is expected: the message names the expected kind and an example.
    CHECK_THROWS_WITH(parse_quantity("80 GB/s", Dimension::Bytes),
                      Catch::Contains("wrong unit 'GB/s'") && Catch::Contains("size"));
    CHECK_THROWS_WITH(parse_quantity("80 XB", Dimension::Bytes), Catch::Contains("unknown unit 'XB'"));
    CHECK_THROWS_AS(parse_quantity("GB", Dimension::Bytes), UnitError);        // no number
    CHECK_THROWS_AS(parse_quantity("-1 GB", Dimension::Bytes), UnitError);     // negative
    CHECK_THROWS_AS(parse_quantity("4 us", Dimension::Bandwidth), UnitError);  // time for bandwidth
}

TEST_CASE("Time::from_seconds rounds to the nearest picosecond", "[sim][time]") {
    using fathom::sim::Time;
    CHECK(Time::from_seconds(1e-12).ps() == 1);
    CHECK(Time::from_seconds(1.4e-12).ps() == 1);
    CHECK(Time::from_seconds(1.6e-12).ps() == 2);
    CHECK(Time::from_seconds(2.5e-6).ps() == 2500000);
    CHECK(Time::from_us(3) == Time::from_ns(3000));
    CHECK(fathom::sim::format_time(Time::from_us(830)) == "830 us");
}

TEST_CASE("Time::from_seconds checks its range", "[sim][time]") {
    using fathom::sim::Time;
    // 2^63 - 1 ps is 9,223,372 s, about 106.75 days: 9e6 s fits, 1e7 s does not.
    CHECK(Time::from_seconds(9e6).ps() == 9000000000000000000LL);
    CHECK_THROWS_AS(Time::from_seconds(1e7), fathom::sim::TimeRangeError);  // an InputError the callers name a key of
    CHECK(Time::in_range(9e6));
    CHECK(!Time::in_range(1e7));
    CHECK(!Time::in_range(-1.0));
    CHECK(!Time::in_range(std::nan("")));
    CHECK_THROWS_WITH(Time::from_seconds(1e7), Catch::Contains("exceeds the range of simulated time"));
    // Negative, NaN and infinite durations are bugs in a model, not input errors.
    CHECK_THROWS_AS(Time::from_seconds(-1e-9), fathom::sim::InternalError);
    CHECK_THROWS_AS(Time::from_seconds(std::nan("")), fathom::sim::InternalError);
    CHECK_THROWS_AS(Time::from_seconds(std::numeric_limits<double>::infinity()), fathom::sim::InternalError);
    CHECK(Time::from_seconds(0.0).ps() == 0);
}
