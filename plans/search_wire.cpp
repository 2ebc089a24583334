#include "plans/search_wire.h"

#include "sim/error.h"

#include <cstdio>
#include <cstdlib>

namespace fathom::plans {

namespace {
[[noreturn]] void malformed(const std::string& what) { throw sim::InputError("malformed search share: " + what); }
}  // namespace

void SearchWireWriter::integer(int64_t v) { out_ += std::to_string(v) + " "; }

void SearchWireWriter::number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a ", v);
    out_ += buf;
}

void SearchWireWriter::text(const std::string& v) { out_ += std::to_string(v.size()) + ":" + v + " "; }

bool SearchWireReader::done() {
    while (pos_ < in_.size() && in_[pos_] == ' ') ++pos_;
    return pos_ >= in_.size();
}

std::string SearchWireReader::token() {
    if (done()) malformed("ends early");
    const size_t end = in_.find(' ', pos_);
    if (end == std::string::npos) malformed("unterminated token");
    std::string t = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return t;
}

int64_t SearchWireReader::integer() {
    const std::string t = token();
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || *end != '\0') malformed("expected an integer, got '" + t + "'");
    return v;
}

double SearchWireReader::number() {
    const std::string t = token();
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0') malformed("expected a number, got '" + t + "'");
    return v;
}

std::string SearchWireReader::text() {
    if (done()) malformed("ends early");
    const size_t colon = in_.find(':', pos_);
    if (colon == std::string::npos) malformed("expected <length>:<text>");
    const std::string n = in_.substr(pos_, colon - pos_);
    char* end = nullptr;
    const unsigned long long len = std::strtoull(n.c_str(), &end, 10);
    if (n.empty() || *end != '\0' || colon + 1 + len > in_.size()) malformed("bad text length '" + n + "'");
    std::string v = in_.substr(colon + 1, len);
    pos_ = colon + 1 + len;
    if (pos_ >= in_.size() || in_[pos_] != ' ') malformed("unterminated text");
    ++pos_;
    return v;
}

size_t SearchWireReader::index(size_t candidates) {
    const int64_t i = integer();
    if (i < 0 || static_cast<size_t>(i) >= candidates)
        malformed("candidate " + std::to_string(i) + " of " + std::to_string(candidates) +
                  " (a share of another search?)");
    return static_cast<size_t>(i);
}

CandidateStatus SearchWireReader::status() {
    const int64_t s = integer();
    if (s < 0 || s > static_cast<int64_t>(CandidateStatus::Skipped)) malformed("unknown status " + std::to_string(s));
    return static_cast<CandidateStatus>(s);
}

}  // namespace fathom::plans
