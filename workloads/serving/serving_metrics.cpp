#include "workloads/serving/serving_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace fathom::workloads::serving {
namespace {

constexpr double kLo = 1e-7, kHi = 1e4;
const double kStep = std::log1p(1e-3);  // 0.1% relative bin width
int bin_count() { return static_cast<int>(std::ceil(std::log(kHi / kLo) / kStep)) + 1; }

// The bin of c in [kLo, kHi]: std::log(c / kLo) / kStep truncated, the definition, computed without
// the log on the hot path (a histogram takes every inter-token gap of a run). thresholds()[i] is
// the least double whose definition gives at least i, found once by stepping from kLo e^(i kStep)
// to the exact boundary (the definition never decreases as c grows); a bin is then an estimate
// from the exponent and a cubic of the mantissa (within a bin), corrected against the thresholds.
size_t exact_bin(double c) { return static_cast<size_t>(std::log(c / kLo) / kStep); }

const std::vector<double>& thresholds() {
    static const std::vector<double> t = [] {
        const size_t n = static_cast<size_t>(bin_count());
        std::vector<double> out(n + 1, std::numeric_limits<double>::infinity());
        out[0] = 0;
        for (size_t i = 1; i <= n; ++i) {
            double x = std::clamp(kLo * std::exp(static_cast<double>(i) * kStep), kLo, kHi);
            if (exact_bin(kHi) < i) break;  // no c in range reaches bin i
            while (x > kLo && exact_bin(std::nextafter(x, 0.0)) >= i) x = std::nextafter(x, 0.0);
            while (exact_bin(x) < i) x = std::nextafter(x, kHi * 2);
            out[i] = x;
        }
        return out;
    }();
    return t;
}

size_t fast_bin(double c) {
    const std::vector<double>& t = thresholds();
    int e = 0;
    const double m = std::frexp(c / kLo, &e);  // c / kLo = m 2^e, m in [0.5, 1)
    // ln(m) on [0.5, 1) by a cubic in (m - 0.75) (error below 2e-4, a fifth of a bin).
    const double d = m - 0.75;
    const double ln_m = -0.28768207245178 + d * (1.3333333333 + d * (-0.8888888889 + d * 0.7901234568));
    const double guess = (static_cast<double>(e) * 0.69314718055994531 + ln_m) / kStep;
    size_t i = guess <= 0 ? 0 : std::min(static_cast<size_t>(guess), t.size() - 2);
    while (i > 0 && c < t[i]) --i;
    while (i + 1 < t.size() && c >= t[i + 1]) ++i;
    return i;
}

// Sorts v ascending as std::sort does (no NaN): an LSD radix sort of the doubles' bit patterns,
// mapped to unsigned keys in the same order, 11 bits a pass, a pass skipped when every key has the
// same digit. A run's report sorts each latency list once (100k to 10M values): the profile of a
// 100k-request run had std::sort at 5%. The same values in the same order, so the same percentiles
// and sums, bit for bit; one list of keys as scratch beside v.
void sort_values(std::vector<double>& v) {
    const size_t n = v.size();
    if (n < 4096) {
        std::sort(v.begin(), v.end());
        return;
    }
    constexpr uint64_t kTop = uint64_t{1} << 63;
    std::vector<uint64_t> keys(n);
    for (size_t i = 0; i < n; ++i) {
        uint64_t u;
        std::memcpy(&u, &v[i], sizeof u);
        keys[i] = (u & kTop) ? ~u : (u | kTop);  // negatives reversed below the positives
    }
    // The keys go back and forth between `keys` and v's storage (as bit patterns).
    auto put = [&](size_t i, uint64_t x) { std::memcpy(&v[i], &x, sizeof x); };
    auto get = [&](size_t i) {
        uint64_t x;
        std::memcpy(&x, &v[i], sizeof x);
        return x;
    };
    constexpr int kBits = 11;
    constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
    std::vector<size_t> start(size_t{1} << kBits);
    bool in_keys = true;  // where the keys are now
    for (int shift = 0; shift < 64; shift += kBits) {
        std::fill(start.begin(), start.end(), 0);
        for (size_t i = 0; i < n; ++i) ++start[((in_keys ? keys[i] : get(i)) >> shift) & kMask];
        if (start[((in_keys ? keys[0] : get(0)) >> shift) & kMask] == n) continue;  // nothing moves
        size_t sum = 0;
        for (size_t& c : start) sum += std::exchange(c, sum);
        for (size_t i = 0; i < n; ++i) {
            if (in_keys) {
                const uint64_t x = keys[i];
                put(start[(x >> shift) & kMask]++, x);
            } else {
                const uint64_t x = get(i);
                keys[start[(x >> shift) & kMask]++] = x;
            }
        }
        in_keys = !in_keys;
    }
    for (size_t i = 0; i < n; ++i) {
        const uint64_t k = in_keys ? keys[i] : get(i);
        const uint64_t u = (k & kTop) ? (k & ~kTop) : ~k;
        std::memcpy(&v[i], &u, sizeof u);
    }
}

double interpolate(const std::vector<double>& v, double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t i = static_cast<size_t>(std::floor(pos));
    const double f = pos - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
}

}  // namespace

Percentiles percentiles(std::vector<double>& v) {
    Percentiles p;
    if (v.empty()) return p;
    sort_values(v);
    double sum = 0;
    for (double x : v) sum += x;
    p.mean = sum / static_cast<double>(v.size());
    p.p50 = interpolate(v, 0.50);
    p.p90 = interpolate(v, 0.90);
    p.p95 = interpolate(v, 0.95);
    p.p99 = interpolate(v, 0.99);
    p.max = v.back();
    return p;
}

LogHistogram::LogHistogram() : bins_(static_cast<size_t>(bin_count()), 0) {}

void LogHistogram::add(double x, int64_t count) {
    if (count <= 0) return;
    const double c = std::clamp(x, kLo, kHi);
    const size_t i = fast_bin(c);
    bins_[std::min(i, bins_.size() - 1)] += count;
    count_ += count;
    sum_ += x * static_cast<double>(count);
    max_ = std::max(max_, x);
}

void LogHistogram::add_repeated(double x, int64_t n) {
    if (n <= 0) return;
    const double c = std::clamp(x, kLo, kHi);
    const size_t i = fast_bin(c);
    bins_[std::min(i, bins_.size() - 1)] += n;
    count_ += n;
    for (int64_t k = 0; k < n; ++k) sum_ += x;
    max_ = std::max(max_, x);
}

double LogHistogram::quantile(double q) const {
    if (count_ == 0) return 0;
    // The bin holding the order statistic at rank q (count - 1), reported at its geometric centre.
    const double rank = q * static_cast<double>(count_ - 1);
    int64_t seen = 0;
    for (size_t i = 0; i < bins_.size(); ++i) {
        seen += bins_[i];
        if (static_cast<double>(seen) > rank)
            return std::min(max_, kLo * std::exp((static_cast<double>(i) + 0.5) * kStep));
    }
    return max_;
}

Percentiles LogHistogram::summary() const {
    Percentiles p;
    p.mean = mean();
    p.p50 = quantile(0.5);
    p.p90 = quantile(0.9);
    p.p95 = quantile(0.95);
    p.p99 = quantile(0.99);
    p.max = max_;
    return p;
}

std::string request_csv_header() {
    return "id,replica,decode_replica,slo_class,arrival_s,queue_s,ttft_s,ttft_service_s,tpot_s,e2e_s,max_itl_s,"
           "kv_transfer_s,prompt_tokens,output_tokens,generated_tokens,prefix_hit_tokens,preemptions,slo_met\n";
}

namespace {
// A CSV cell: quoted (quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}
}  // namespace

std::string request_csv_row(const RequestRecord& r, const std::vector<std::string>& classes) {
    const std::string cls = r.slo_class >= 0 && static_cast<size_t>(r.slo_class) < classes.size()
                                ? csv_cell(classes[static_cast<size_t>(r.slo_class)])
                                : std::to_string(r.slo_class);
    char buf[512];
    std::snprintf(buf, sizeof buf, "%lld,%d,%d,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%lld,%lld,%lld,%lld,%d,%d\n",
                  static_cast<long long>(r.id), r.replica, r.decode_replica, cls.c_str(), r.arrival_s, r.queue_s,
                  r.ttft_s, r.ttft_service_s, r.tpot_s, r.e2e_s, r.max_itl_s, r.kv_transfer_s,
                  static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.output_tokens),
                  static_cast<long long>(r.generated_tokens), static_cast<long long>(r.prefix_hit_tokens),
                  r.preemptions, r.slo_met ? 1 : 0);
    return buf;
}

}  // namespace fathom::workloads::serving
