#pragma once
// Named, seeded random streams. Each stream's state is derived from (scenario seed, stream name)
// alone, so adding a new stream never shifts the numbers another stream draws, and results do not
// depend on the order in which streams are first used or on the thread that runs the simulation.
//
// The generator is SplitMix64 (Steele et al., 2014): 64-bit state, full period 2^64, and its
// output is identical on every platform. Distributions are written here (not std::*_distribution,
// whose algorithms differ between standard libraries), so a seed reproduces bit-identical draws.
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

namespace fathom::sim {

// SplitMix64's step: a well-mixed 64-bit value from any input (a stateless hash of it; the stream
// below is this over an advancing counter).
inline uint64_t mix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class RandomStream {
public:
    explicit RandomStream(uint64_t state) : state_(state) {}
    uint64_t next_u64() {
        const uint64_t x = state_;
        state_ += 0x9E3779B97F4A7C15ull;
        return mix64(x);
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    // Exponential with the given rate (mean 1/rate), by inversion.
    double exponential(double rate) { return -std::log1p(-uniform()) / rate; }
    // Weibull of `shape` k and `scale` eta by inversion: eta (-ln(1 - U))^(1/k) (k = 1: exponential).
    double weibull(double shape, double scale) { return scale * std::pow(-std::log1p(-uniform()), 1.0 / shape); }
    // Standard normal by Box-Muller (the cosine branch; one draw per call keeps streams simple).
    double standard_normal() {
        double u1 = uniform();
        while (u1 <= 0) u1 = uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
    }
    // Gamma(shape k, scale 1) by Marsaglia and Tsang (2000): d = k - 1/3, c = 1/sqrt(9d), accept
    // d (1 + c x)^3 for a standard normal x by the squeeze, then the exact log test. Shapes below 1
    // use the boost Gamma(k) = Gamma(k + 1) U^(1/k).
    double gamma(double k) {
        if (k < 1) {
            double u = uniform();
            while (u <= 0) u = uniform();
            return gamma(k + 1) * std::pow(u, 1.0 / k);
        }
        const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
        while (true) {
            double x, v;
            do {
                x = standard_normal();
                v = 1.0 + c * x;
            } while (v <= 0);
            v = v * v * v;
            const double u = uniform();
            if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
            if (u > 0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
        }
    }

private:
    static constexpr double kPi = 3.14159265358979323846;
    uint64_t state_;
};

class RandomStreams {
public:
    explicit RandomStreams(uint64_t seed) : seed_(seed) {}
    RandomStream& stream(const std::string& name) {
        auto it = streams_.find(name);
        if (it == streams_.end()) it = streams_.emplace(name, RandomStream(derive(name))).first;
        return it->second;
    }
    uint64_t seed() const { return seed_; }

private:
    uint64_t derive(const std::string& name) const {
        uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the name, mixed with the seed
        for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
        RandomStream mix(seed_ ^ h);
        return mix.next_u64();
    }
    uint64_t seed_;
    std::map<std::string, RandomStream> streams_;
};

}  // namespace fathom::sim
