#include "sim/units.h"

#include "sim/time.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fathom::sim {
namespace {

struct UnitEntry {
    const char* name;
    Dimension dim;
    double factor;
};

// Every accepted spelling. Decimal prefixes for rates and sizes, binary only with the "i" forms.
constexpr UnitEntry kUnits[] = {
    {"B", Dimension::Bytes, 1.0},
    {"kB", Dimension::Bytes, 1e3},
    {"KB", Dimension::Bytes, 1e3},
    {"MB", Dimension::Bytes, 1e6},
    {"GB", Dimension::Bytes, 1e9},
    {"TB", Dimension::Bytes, 1e12},
    {"PB", Dimension::Bytes, 1e15},
    {"KiB", Dimension::Bytes, 1024.0},
    {"MiB", Dimension::Bytes, 1048576.0},
    {"GiB", Dimension::Bytes, 1073741824.0},
    {"TiB", Dimension::Bytes, 1099511627776.0},
    {"B/s", Dimension::Bandwidth, 1.0},
    {"kB/s", Dimension::Bandwidth, 1e3},
    {"MB/s", Dimension::Bandwidth, 1e6},
    {"GB/s", Dimension::Bandwidth, 1e9},
    {"TB/s", Dimension::Bandwidth, 1e12},
    {"Gb/s", Dimension::Bandwidth, 1e9 / 8},
    {"Tb/s", Dimension::Bandwidth, 1e12 / 8},
    {"Gbps", Dimension::Bandwidth, 1e9 / 8},
    {"FLOP/s", Dimension::FlopRate, 1.0},
    {"GFLOP/s", Dimension::FlopRate, 1e9},
    {"TFLOP/s", Dimension::FlopRate, 1e12},
    {"PFLOP/s", Dimension::FlopRate, 1e15},
    {"TFLOPS", Dimension::FlopRate, 1e12},
    {"FLOP", Dimension::Flops, 1.0},
    {"GFLOP", Dimension::Flops, 1e9},
    {"TFLOP", Dimension::Flops, 1e12},
    {"PFLOP", Dimension::Flops, 1e15},
    {"ps", Dimension::Time, 1e-12},
    {"ns", Dimension::Time, 1e-9},
    {"us", Dimension::Time, 1e-6},
    {"ms", Dimension::Time, 1e-3},
    {"s", Dimension::Time, 1.0},
    {"min", Dimension::Time, 60.0},
    {"h", Dimension::Time, 3600.0},
    {"day", Dimension::Time, 86400.0},
    {"days", Dimension::Time, 86400.0},
    {"W", Dimension::Power, 1.0},
    {"kW", Dimension::Power, 1e3},
};

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

}  // namespace

const char* dimension_example(Dimension d) {
    switch (d) {
        case Dimension::Bytes: return "80 GB";
        case Dimension::Bandwidth: return "450 GB/s";
        case Dimension::FlopRate: return "989 TFLOP/s";
        case Dimension::Flops: return "2 TFLOP";
        case Dimension::Time: return "5 us";
        case Dimension::Power: return "700 W";
    }
    return "?";
}

double parse_quantity(std::string_view text, Dimension dim) {
    const std::string s = trim(text);
    const char* begin = s.c_str();
    char* end = nullptr;
    const double number = std::strtod(begin, &end);
    if (end == begin) {
        throw UnitError("expected a " + std::string(name(dim)) + " with a unit (e.g. \"" + dimension_example(dim) +
                        "\"), got \"" + s + "\"");
    }
    const std::string unit = trim(std::string_view(end));
    if (unit.empty()) {
        throw UnitError("missing unit in \"" + s + "\": expected a " + name(dim) + " such as \"" +
                        dimension_example(dim) + "\"");
    }
    for (const auto& u : kUnits) {
        if (unit == u.name) {
            if (u.dim != dim) {
                throw UnitError("wrong unit '" + unit + "' in \"" + s + "\": expected a " + name(dim) + " such as \"" +
                                dimension_example(dim) + "\"");
            }
            if (!std::isfinite(number) || number < 0) throw UnitError("value must be finite and >= 0: \"" + s + "\"");
            return number * u.factor;
        }
    }
    throw UnitError("unknown unit '" + unit + "' in \"" + s + "\": expected a " + name(dim) + " such as \"" +
                    dimension_example(dim) + "\"");
}

std::string format_time(Time t) {
    const double s = t.seconds();
    char buf[64];
    if (s >= 1.0) std::snprintf(buf, sizeof buf, "%.4g s", s);
    else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
    else if (s >= 1e-6) std::snprintf(buf, sizeof buf, "%.4g us", s * 1e6);
    else std::snprintf(buf, sizeof buf, "%.4g ns", s * 1e9);
    return buf;
}

}  // namespace fathom::sim
