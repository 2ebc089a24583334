#pragma once
// A hash that is the same on every run, build and platform (64-bit FNV-1a over a canonical byte
// encoding), for caches keyed by plans. std::hash promises none of that. Integers and booleans are
// hashed as 8 little-endian bytes, doubles by their IEEE-754 bit pattern (-0 as 0), strings and
// lists with their length first, so adjacent fields cannot alias.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fathom::sim {

class StableHash {
public:
    StableHash& add(uint64_t v) {
        for (int i = 0; i < 8; ++i) byte(static_cast<unsigned char>(v >> (8 * i)));
        return *this;
    }
    StableHash& add(double v) {
        if (v == 0) v = 0;  // -0 and +0 hash alike
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        return add(bits);
    }
    StableHash& add(std::string_view s) {
        add(static_cast<uint64_t>(s.size()));
        for (char c : s) byte(static_cast<unsigned char>(c));
        return *this;
    }
    StableHash& add(const std::string& s) { return add(std::string_view(s)); }
    template <typename T>
    StableHash& add(const std::vector<T>& v) {
        add(static_cast<uint64_t>(v.size()));
        for (const auto& x : v) add(x);
        return *this;
    }
    // Integers, booleans and enums.
    template <typename T, typename = std::enable_if_t<std::is_integral_v<T> || std::is_enum_v<T>>>
    StableHash& add(T v) {
        if constexpr (std::is_enum_v<T>) return add(static_cast<uint64_t>(static_cast<std::underlying_type_t<T>>(v)));
        else return add(static_cast<uint64_t>(static_cast<int64_t>(v)));
    }
    uint64_t value() const { return h_; }

private:
    void byte(unsigned char c) {
        h_ ^= c;
        h_ *= 1099511628211ULL;  // FNV-1a 64-bit prime
    }
    uint64_t h_ = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
};

}  // namespace fathom::sim
