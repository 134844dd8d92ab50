#pragma once
// The name of a report's temporary file (common/output.h: -o is written to a temporary file in
// the destination's directory, then renamed over it) and the removal of the ones earlier runs
// left behind. A run killed by SIGKILL (or a power cut) cannot remove its own: the name says
// whose it is, ".NAME.rdmabench-HOST-PID.XXXXXX", so a user knows what the file is, and the next
// report to NAME removes those of processes of this host that no longer exist.
// Thread-safety: none needed (files only); never throws.

#include <string>

namespace rdmabench {

// The mkstemp template for a report to `dir`/`base` ("XXXXXX" at its end); when the name would
// be longer than a file name may be (NAME_MAX), the short ".NAME.XXXXXX" (no cleanup possible).
// Before returning, removes `dir`'s ".NAME.rdmabench-HOST-PID.XXXXXX" files whose HOST is this
// host and whose PID no longer runs (kill(PID, 0) fails with ESRCH). Best effort.
std::string reportTempTemplate(const std::string& dir, const std::string& base);

}  // namespace rdmabench
