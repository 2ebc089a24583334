#pragma once
// Opening an input file (a scenario, a trace, a measurements CSV) with an error that says why it
// cannot be read: no such file, a directory, not readable. Every reader opens through here, so a
// directory given as a file reads "it is a directory", not "empty file" or "no such file".
#include <fstream>
#include <string>

namespace fathom::sim {

// Why `path` cannot be read as a file: "no such file", "it is a directory", "not readable"; ""
// when it can. Opens nothing. For a reader that checks a path before it opens it (a scenario's
// trace).
std::string input_problem(const std::string& path);

// The open stream (binary: readers count lines themselves), or InputError naming `path` and the
// reason: "cannot open the <what>: it is a directory".
std::ifstream open_input(const std::string& path, const std::string& what);

// Removes a UTF-8 byte order mark from the start of a file's first line (spreadsheets write one).
void strip_bom(std::string& line);

}  // namespace fathom::sim
