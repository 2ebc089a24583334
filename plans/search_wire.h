#pragma once
// The text form of a partitioned search's share (plans/search.h: encode_search_share): tokens
// separated by spaces; integers in decimal, doubles in C99 hexadecimal (%a: exact, so the merged
// result is bit-identical to a single process's), strings as <length>:<bytes>.
#include "plans/search.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fathom::plans {

class SearchWireWriter {
public:
    void integer(int64_t v);
    void number(double v);
    void text(const std::string& v);
    const std::string& str() const { return out_; }

private:
    std::string out_;
};

// Throws sim::InputError("malformed search share ...") on text another writer did not produce.
class SearchWireReader {
public:
    explicit SearchWireReader(const std::string& in) : in_(in) {}
    bool done();
    int64_t integer();
    double number();
    std::string text();
    size_t index(size_t candidates);  // a candidate index below `candidates`
    CandidateStatus status();

private:
    std::string token();
    const std::string& in_;
    size_t pos_ = 0;
};

// A share: for each candidate the partition owns and that ran, its index, status and reason, then
// the numbers `numbers(c)` points at (the same list for writing and reading), then `extra`.
template <typename C, typename Numbers>
std::string encode_share(const std::vector<C>& cs, const Partition& partition, Numbers numbers) {
    SearchWireWriter w;
    for (const C& c : cs) {
        if (!partition.owns(static_cast<size_t>(c.index)) || c.status == CandidateStatus::Skipped) continue;
        w.integer(c.index);
        w.integer(static_cast<int64_t>(c.status));
        w.text(c.reason);
        for (double* x : numbers(const_cast<C&>(c))) w.number(*x);
    }
    return w.str();
}

template <typename C, typename Numbers>
void merge_share(std::vector<C>& cs, const std::string& share, Numbers numbers) {
    SearchWireReader r(share);
    while (!r.done()) {
        C& c = cs.at(r.index(cs.size()));
        c.status = r.status();
        c.reason = r.text();
        for (double* x : numbers(c)) *x = r.number();
    }
}

}  // namespace fathom::plans
