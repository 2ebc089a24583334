#include "sim/trace_writer.h"

#include <cstdio>
#include <map>

namespace fathom::sim {
namespace {

void write_escaped(std::ostream& out, const std::string& s) {
    out << '"';
    for (char c : s) {
        switch (c) {
            case '"': out << "\\\""; break;
            case '\\': out << "\\\\"; break;
            case '\n': out << "\\n"; break;
            case '\t': out << "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out << buf;
                } else {
                    out << c;
                }
        }
    }
    out << '"';
}

void write_us(std::ostream& out, Time t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(t.ps()) * 1e-6);
    out << buf;
}

}  // namespace

void write_chrome_trace(const TaskGraph& graph, std::ostream& out,
                        const std::function<std::string(const TaskRecord&)>& describe) {
    std::map<std::string, int> pids;  // group -> pid, in first-appearance order of streams
    std::vector<int> stream_pid(graph.stream_count());
    for (StreamId s = 0; s < graph.stream_count(); ++s) {
        const auto& g = graph.stream_info(s).group;
        auto it = pids.find(g);
        if (it == pids.end()) it = pids.emplace(g, static_cast<int>(pids.size()) + 1).first;
        stream_pid[s] = it->second;
    }
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
        if (!first) out << ",\n";
        first = false;
    };
    for (const auto& [group, pid] : pids) {
        sep();
        out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"args\":{\"name\":";
        write_escaped(out, group);
        out << "}}";
        sep();
        out << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << pid << ",\"args\":{\"sort_index\":" << pid
            << "}}";
    }
    for (StreamId s = 0; s < graph.stream_count(); ++s) {
        sep();
        out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << stream_pid[s] << ",\"tid\":" << s + 1
            << ",\"args\":{\"name\":";
        write_escaped(out, graph.stream_info(s).name);
        out << "}}";
    }
    for (TaskId t = 0; t < graph.task_count(); ++t) {
        if (!graph.finished(t)) continue;
        const TaskRecord r = graph.record(t);
        std::string name = describe ? describe(r) : std::string();
        if (name.empty()) name = graph.name(r.name);
        sep();
        out << "{\"ph\":\"X\",\"pid\":" << stream_pid[r.stream] << ",\"tid\":" << r.stream + 1 << ",\"name\":";
        write_escaped(out, name);
        out << ",\"ts\":";
        write_us(out, r.start);
        out << ",\"dur\":";
        write_us(out, r.end - r.start);
        out << "}";
    }
    out << "\n]}\n";
}

}  // namespace fathom::sim
