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

class RandomStream {
public:
    explicit RandomStream(uint64_t state) : state_(state) {}
    uint64_t next_u64() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    // Exponential with the given rate (mean 1/rate), by inversion.
    double exponential(double rate) { return -std::log1p(-uniform()) / rate; }

private:
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
