#pragma once
// The text form of a partitioned search's share (plans/search.h: encode_search_share): tokens
// separated by spaces; integers in decimal, doubles in C99 hexadecimal (%a: exact, so the merged
// result is bit-identical to a single process's), strings as <length>:<bytes>. What a candidate
// carries is its declared fields' (plans/search_report.h), so the list is not repeated here.
#include "plans/search.h"
#include "plans/search_report.h"

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
// every stored field of `fields` (plans/search_report.h: the values an evaluation sets), in order.
template <typename C>
std::string encode_share(const std::vector<C>& cs, const Partition& partition,
                         const std::vector<CandidateField<C>>& fields) {
    SearchWireWriter w;
    for (const C& c : cs) {
        if (!partition.owns(static_cast<size_t>(c.index)) || c.status == CandidateStatus::Skipped) continue;
        w.integer(c.index);
        w.integer(static_cast<int64_t>(c.status));
        w.text(c.reason);
        for (const auto& f : fields)
            if (f.stored) w.number(c.*f.stored);
    }
    return w.str();
}

template <typename C>
void merge_share(std::vector<C>& cs, const std::string& share, const std::vector<CandidateField<C>>& fields) {
    SearchWireReader r(share);
    while (!r.done()) {
        C& c = cs.at(r.index(cs.size()));
        c.status = r.status();
        c.reason = r.text();
        for (const auto& f : fields)
            if (f.stored) c.*f.stored = r.number();
    }
}

}  // namespace fathom::plans
