#pragma once
// Simulated time: a signed 64-bit count of picoseconds since the start of a simulation.
//
// One type serves instants and durations (both are picosecond counts); the range is about
// +/-106 days, far beyond one training step or a serving run. Conversion from floating-point
// seconds happens only in `Time::from_seconds`, which rounds to the nearest picosecond (ties away
// from zero, std::llround). Everything after that is exact integer arithmetic, so event order
// never depends on floating-point noise.
#include "sim/error.h"
#include "sim/text.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace fathom::sim {

class Time {
public:
    constexpr Time() = default;
    static constexpr Time from_ps(int64_t ps) { return Time(ps); }
    static constexpr Time from_ns(int64_t ns) { return Time(ns * 1000); }
    static constexpr Time from_us(int64_t us) { return Time(us * 1000000); }
    // Rounds to the nearest picosecond. A negative, NaN or infinite duration is a bug in a model
    // (InternalError); a finite one beyond the range (about 106 days) comes from the input's scale
    // (InputError: simulated time cannot represent it).
    static Time from_seconds(double s) {
        if (!in_range(s)) out_of_range(s);
        return Time(static_cast<int64_t>(std::llround(s * 1e12)));
    }
    // Whether from_seconds(s) is a time (finite, >= 0, within the range).
    static bool in_range(double s) { return s >= 0.0 && std::isfinite(s) && s * 1e12 < kMaxPs; }

private:
    [[noreturn]] static void out_of_range(double s) {
        if (!(s >= 0.0) || !std::isfinite(s))
            throw InternalError("Time::from_seconds: duration " + short_number(s) + " s is negative or not finite");
        throw TimeRangeError("a duration of " + short_number(s) +
                             " s exceeds the range of simulated time (about 106 days); check the scale of the input");
    }

public:
    static constexpr Time zero() { return Time(0); }
    static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

    constexpr int64_t ps() const { return ps_; }
    constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
    constexpr double us() const { return static_cast<double>(ps_) * 1e-6; }
    constexpr double ms() const { return static_cast<double>(ps_) * 1e-9; }

    // Sums and products are checked: a simulation whose clock would pass about 106 days (a step of
    // millions of micro-batches) stops with an InputError instead of wrapping around (UBSan).
    constexpr Time operator+(Time o) const { return Time(checked_add(ps_, o.ps_)); }
    constexpr Time operator-(Time o) const { return Time(checked_add(ps_, -o.ps_)); }
    constexpr Time& operator+=(Time o) {
        ps_ = checked_add(ps_, o.ps_);
        return *this;
    }
    constexpr Time& operator-=(Time o) {
        ps_ = checked_add(ps_, -o.ps_);
        return *this;
    }
    constexpr Time operator*(int64_t k) const {
        int64_t r = 0;
        if (__builtin_mul_overflow(ps_, k, &r)) overflow();
        return Time(r);
    }
    constexpr bool operator==(Time o) const { return ps_ == o.ps_; }
    constexpr bool operator!=(Time o) const { return ps_ != o.ps_; }
    constexpr bool operator<(Time o) const { return ps_ < o.ps_; }
    constexpr bool operator<=(Time o) const { return ps_ <= o.ps_; }
    constexpr bool operator>(Time o) const { return ps_ > o.ps_; }
    constexpr bool operator>=(Time o) const { return ps_ >= o.ps_; }

private:
    // The largest double below 2^63 ps that rounds into int64 range.
    static constexpr double kMaxPs = 9.2233720368547748e18;
    constexpr explicit Time(int64_t ps) : ps_(ps) {}
    [[noreturn]] static void overflow() {
        throw TimeRangeError("simulated time exceeds its range (about 106 days); check the scale of the input");
    }
    static constexpr int64_t checked_add(int64_t a, int64_t b) {
        int64_t r = 0;
        if (__builtin_add_overflow(a, b, &r)) overflow();
        return r;
    }
    int64_t ps_ = 0;
};

inline constexpr Time max(Time a, Time b) { return a < b ? b : a; }
inline constexpr Time min(Time a, Time b) { return a < b ? a : b; }

// "12.5 ms", "830 us", "3.2 s": three significant digits in the largest fitting unit.
std::string format_time(Time t);

}  // namespace fathom::sim
