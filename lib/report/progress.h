#pragma once
// The progress line of long sweeps: on a terminal, stderr shows which size is running, how many
// remain and an estimate of the time left, overwritten in place ("\r...\x1b[K") and cleared
// before every report row and at the end, so it never mixes with the report. The CLI enables it
// only when stderr is a TTY, --quiet is not given, and no machine format (json, csv) goes to
// stdout. Thread-safety: one ProgressLine per thread (the benchmark thread).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "report/report.h"

namespace rdmabench::report {

// True when file descriptor 2 is a terminal (isatty(2)).
bool stderrIsTerminal();

// True when file descriptors 1 and 2 are the same terminal (both TTYs, same device): a user then
// reads one stream, and an error the CLI prints on stderr is not repeated as the text report's
// `# error:` line (docs/cli.md, "Output files and failures"). A file, pipe or another terminal
// on either side: false, and the report keeps its error line.
bool stdoutSharesStderrTerminal();

class ProgressLine {
 public:
  // `sizes`: the whole sweep in order (bytes), used to weigh the time estimate; may be empty
  // (then every size weighs the same). `now` returns seconds on a monotonic clock (tests inject
  // one; default steady_clock). Writes nothing when !enabled.
  ProgressLine(std::ostream& out, bool enabled, std::vector<uint64_t> sizes,
               std::function<double()> now = {});
  ~ProgressLine();  // clears the line

  // Size `index` of `count` (from 0) with `bytes` per message starts now.
  void sizeStart(size_t index, size_t count, uint64_t bytes);
  // Removes the line (before a report row is printed, and at the end). Idempotent.
  void clear();

  // The text shown for size `index` of `count`, `elapsed` seconds after the first size started:
  // "rdmabench: size 4K (7/23), 16 left, ETA 0:12" ("ETA ?" before any size has finished).
  // ETA = elapsed x remaining weight / finished weight, weight(size) = 16384 + bytes (a fixed
  // per-size cost plus one proportional to the payload, a rough model of OSU-style sweeps).
  std::string text(size_t index, size_t count, uint64_t bytes, double elapsed) const;

 private:
  double weight(size_t index, size_t count) const;
  std::ostream& out_;
  bool enabled_;
  std::vector<uint64_t> sizes_;
  std::function<double()> now_;
  double start_ = -1;
  bool shown_ = false;
};

// A Reporter that clears `progress` before forwarding each call to `inner`, so report lines on
// a terminal never land behind a progress line. Both must outlive it. `dropAbortMessage`:
// abort() forwards an empty message (a text format then ends without its `# error:` line),
// for a report on the terminal where the CLI prints the error on stderr anyway
// (stdoutSharesStderrTerminal; never for json / csv, whose error is part of the document).
std::unique_ptr<Reporter> withProgress(Reporter& inner, ProgressLine& progress,
                                       bool dropAbortMessage = false);

}  // namespace rdmabench::report
