#pragma once
// Writing an output file (--json, -o, --trace, --requests, --intervals, DOT): all or nothing. A
// regular file (or a new one) is written beside its target and renamed over it, so a reader never
// sees a partial file and a failed write leaves none; a symlink is followed and its target
// replaced so (the link stays a link); a path under /dev or /proc (/dev/null, /dev/stdout: an open
// descriptor), or a target that is not a regular file (a FIFO), is written in place (appended),
// as renaming over it would replace the device, or the file the shell redirected to, with a new
// file.
#include <string>

namespace fathom::scenarios {

// Throws sim::InputError naming `path` when it cannot be written.
void write_output_file(const std::string& path, const std::string& text);

}  // namespace fathom::scenarios
