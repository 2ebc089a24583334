#include "sim/trace_writer.h"

#include <cstdio>
#include <map>

namespace fathom::sim {
namespace {

void write_escaped(std::ostream& out, std::string_view s) {
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

void write_args(std::ostream& out, std::initializer_list<TraceArg> args) {
    out << ",\"args\":{";
    bool first = true;
    for (const TraceArg& a : args) {
        if (!first) out << ',';
        first = false;
        write_escaped(out, a.name);
        out << ':' << a.value;
    }
    out << '}';
}

}  // namespace

TraceWriter::TraceWriter(std::ostream& out) : out_(out) { out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"; }

void TraceWriter::begin_event() {
    if (!first_) out_ << ",\n";
    first_ = false;
}

void TraceWriter::process_name(int pid, std::string_view name) {
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"args\":{\"name\":";
    write_escaped(out_, name);
    out_ << "}}";
}

void TraceWriter::process_sort_index(int pid, int index) {
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << pid << ",\"args\":{\"sort_index\":" << index
         << "}}";
}

void TraceWriter::thread_name(int pid, int tid, std::string_view name) {
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"args\":{\"name\":";
    write_escaped(out_, name);
    out_ << "}}";
}

void TraceWriter::begin_complete(int pid, int tid, std::string_view name) {
    begin_event();
    out_ << "{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"name\":";
    write_escaped(out_, name);
}

void TraceWriter::end_complete(std::initializer_list<TraceArg> args) {
    if (args.size() > 0) write_args(out_, args);
    out_ << "}";
}

void TraceWriter::complete(int pid, int tid, std::string_view name, Time start, Time duration,
                           std::initializer_list<TraceArg> args) {
    begin_complete(pid, tid, name);
    out_ << ",\"ts\":";
    write_us(out_, start);
    out_ << ",\"dur\":";
    write_us(out_, duration);
    end_complete(args);
}

void TraceWriter::complete_seconds(int pid, int tid, std::string_view name, double start_s, double duration_s,
                                   std::initializer_list<TraceArg> args) {
    begin_complete(pid, tid, name);
    char buf[96];
    std::snprintf(buf, sizeof buf, ",\"ts\":%.3f,\"dur\":%.3f", start_s * 1e6, duration_s * 1e6);
    out_ << buf;
    end_complete(args);
}

void TraceWriter::counter(int pid, std::string_view name, Time t, std::initializer_list<TraceArg> values) {
    begin_event();
    out_ << "{\"ph\":\"C\",\"pid\":" << pid << ",\"name\":";
    write_escaped(out_, name);
    out_ << ",\"ts\":";
    write_us(out_, t);
    write_args(out_, values);
    out_ << "}";
}

void TraceWriter::close() {
    if (closed_) return;
    closed_ = true;
    out_ << "\n]}\n";
}

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
    TraceWriter w(out);
    for (const auto& [group, pid] : pids) {
        w.process_name(pid, group);
        w.process_sort_index(pid, pid);
    }
    for (StreamId s = 0; s < graph.stream_count(); ++s)
        w.thread_name(stream_pid[s], static_cast<int>(s) + 1, graph.stream_info(s).name);
    for (TaskId t = 0; t < graph.task_count(); ++t) {
        if (!graph.finished(t)) continue;
        const TaskRecord r = graph.record(t);
        std::string name = describe ? describe(r) : std::string();
        if (name.empty()) name = graph.name(r.name);
        w.complete(stream_pid[r.stream], static_cast<int>(r.stream) + 1, name, r.start, r.end - r.start);
    }
    w.close();
}

}  // namespace fathom::sim
