#pragma once
// Quantities with units, parsed from text such as "80 GB", "3.35 TB/s", "989.4 TFLOP/s", "4 us".
//
// Values are returned in SI base units as double: bytes, bytes/s, FLOP/s, FLOP, seconds, watts.
// Prefixes are decimal (k, M, G, T, P = 1e3..1e15) except the binary KiB/MiB/GiB/TiB. A bandwidth
// in bits ("400 Gb/s") is converted to bytes/s. A missing or wrong unit throws UnitError naming
// the expected kind, so the caller can add file, line and key.
#include "sim/enum_names.h"

#include <stdexcept>
#include <string>
#include <string_view>

namespace fathom::sim {

enum class Dimension { Bytes, Bandwidth, FlopRate, Flops, Time, Power };
// What a quantity of each dimension is called in messages and the key reference.
constexpr auto enum_names(Dimension) {
    return name_table<Dimension>({{Dimension::Bytes, "size"},
                                  {Dimension::Bandwidth, "bandwidth"},
                                  {Dimension::FlopRate, "compute rate"},
                                  {Dimension::Flops, "operation count"},
                                  {Dimension::Time, "time"},
                                  {Dimension::Power, "power"}});
}
const char* dimension_example(Dimension d);  // "80 GB", "450 GB/s", ...

class UnitError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Parses "<number> <unit>" (space optional) for the given dimension; throws UnitError.
double parse_quantity(std::string_view text, Dimension dim);

}  // namespace fathom::sim
