#pragma once
// The per-node history of `rdmabench check --record DIR` / `--baseline DIR` (docs/check.md):
// one JSON file per node, DIR/NODE.json, {"schema": "rdmabench-check-history", "version": 1,
// "node": NODE, "runs": [{"date", "healthy", "figures": {KEY: VALUE}}]}. KEY names the subject and
// the figure ("rxe0/1 lat_p99_us", "node noise_stolen_pct", "rxe0/1 rate hw_counters/np_cnp_sent").
// Appending is atomic and serialised: under an flock on DIR/.NODE.lock the file is read, the run
// added, the whole written to a temporary file in DIR, fsynced and renamed over it; two checks at
// once on one node (a prolog and the health check) both land, and a crash leaves the previous
// file. A history that cannot be read, is not JSON, belongs to another node or has another schema
// version is never overwritten: HistoryError names the file and what is wrong with it.
// Thread-safety: functions only; concurrent processes are serialised by the lock.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"

namespace rdmabench::check {

inline constexpr int kHistoryVersion = 1;
inline constexpr const char* kHistorySchema = "rdmabench-check-history";
// The file keeps the newest this many runs (older ones are dropped when a run is appended).
inline constexpr size_t kHistoryMaxRuns = 1000;
// The largest history file read, bytes.
inline constexpr size_t kHistoryMaxBytes = 64u << 20;

// The history could not be used (exit 3): "history /d/n1.json: not JSON: ..." and the like.
class HistoryError : public Error {
 public:
  using Error::Error;
};

struct HistoryRun {
  std::string date;
  bool healthy = true;
  std::map<std::string, double> figures;
};

struct History {
  std::string path;
  bool exists = false;  // false: no file yet (an empty history)
  std::string node;
  std::vector<HistoryRun> runs;  // oldest first

  // KEY's values over the healthy runs, newest `window` of them at most, oldest first.
  std::vector<double> values(const std::string& key, size_t window) const;
};

// DIR/NODE.json. UsageError for a NODE that is not a plain file name.
std::string historyPath(const std::string& dir, const std::string& node);

// UsageError naming `option` when `dir` is not an existing directory.
void checkHistoryDir(const std::string& dir, const std::string& option);

// Reads NODE's history in DIR (a missing file is an empty history; a missing DIR too).
// HistoryError for an unreadable, corrupt, other-node or other-version file.
History readHistory(const std::string& dir, const std::string& node);

// Appends `run` as described above. `lockTimeoutMs`: longest wait for the lock (HistoryError
// naming the lock file and who may hold it after that). HistoryError for a file readHistory
// refuses (it is left untouched) or a failed write (SystemError text).
void appendRun(const std::string& dir, const std::string& node, const HistoryRun& run,
               int64_t lockTimeoutMs);

}  // namespace rdmabench::check
