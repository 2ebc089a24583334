#pragma once
// The text form of a partitioned search's share (plans/search.h: encode_search_share): tokens
// separated by spaces; integers in decimal, doubles in C99 hexadecimal (%a: exact, so the merged
// result is bit-identical to a single process's), strings as <length>:<bytes>.
#include <cstddef>
#include <cstdint>
#include <string>

#include "plans/search.h"

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

}  // namespace fathom::plans
