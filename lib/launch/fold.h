#pragma once
// The --np launcher's stderr: every forked rank writes into its own pipe, and the launcher
// prints each line once for all ranks that wrote the same text within a short window:
// "rdmabench: error: ranks 0-5 on vm: --cpu 99: ..." instead of six lines (docs/rendezvous.md,
// "Failure"). Lines are equal when they are equal after the rank prefix ("rank N on HOST: ");
// lines without one are folded when identical and printed once with " (ranks 0-5)" appended.
// A rank that stopped because another failed relays it ("rank 95 on host vm failed: rank 2 on
// host vm failed: ROOT", a chain as the failure spreads): those lines are held to the end and
// printed as one line per first failed rank and root cause, "ranks 0-1,3-299 on vm: rank 2 on
// host vm failed: ROOT", so a collapse of 1000 ranks is the root cause's lines, not one per rank.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rdmabench::launch {

// "0-3,5,7-8": sorted ranks as ranges.
std::string formatRankList(const std::vector<int>& ranks);

// `msg` without its leading "rank N: " (N = `rank`, repeated or not): the error text of a rank
// whose line already says "rank N on HOST: " (collective/comm.cc prefixes its errors). Identical
// errors of several ranks then fold into one line.
std::string stripOwnRank(const std::string& msg, int rank);

// Groups lines of several ranks. Pure (the clock is passed in), unit-tested. Not thread-safe.
class LineFolder {
 public:
  // `windowNs`: a line is printed once this long has passed since the first rank wrote it (or
  // at flushAll), with every rank that wrote the same text by then. `out` receives complete
  // lines without the newline, in the order of their first appearance. `ranks` > 0: a line
  // every one of that many ranks wrote goes out at once (nothing more can join it).
  LineFolder(int64_t windowNs, std::function<void(const std::string&)> out, int ranks = 0);
  // One line (without its newline) written by `rank` at `nowNs`.
  void add(int rank, const std::string& line, int64_t nowNs);
  // Prints the groups whose window has passed at `nowNs` (in order: an older group first).
  void flushDue(int64_t nowNs);
  // Prints everything still held.
  void flushAll();

 private:
  struct Group {
    std::string head, tail;  // around the rank prefix; `prefixed` false: head is the line
    bool prefixed = false;
    std::string host;
    std::vector<int> ranks;
    int64_t firstNs = 0;
  };
  // Relayed failures with one origin (the innermost "rank N on host H failed: ") and root text.
  struct Relay {
    std::string head, host;  // of the relaying ranks' lines
    std::string origin;      // "rank 2 on host vm failed: "
    std::string root;
    std::vector<int> ranks;
  };
  bool addRelay(int rank, const Group& g);
  void emit(const Group& g);
  int64_t windowNs_;
  std::function<void(const std::string&)> out_;
  size_t ranks_;
  std::vector<Group> groups_;  // first appearance order
  std::vector<Relay> relays_;  // first appearance order; printed by flushAll
};

// Pipes for the ranks' stderr and the thread that drains them (poll) into a LineFolder writing
// to the launcher's stderr. Usage: create before forking; in each child call
// redirectChild(rank) (its stderr becomes its pipe; the other pipes are closed); in the parent
// after every fork start(), then finish() once every child has exited (reads what is left until
// EOF or `drainMs`, prints everything). A rank writing a lot never blocks: the pipes are drained
// continuously. Errors: SystemError when a pipe cannot be created.
class StderrFolder {
 public:
  explicit StderrFolder(int ranks, int64_t windowMs = 500);
  ~StderrFolder();
  StderrFolder(const StderrFolder&) = delete;
  StderrFolder& operator=(const StderrFolder&) = delete;
  void redirectChild(int rank);  // in the forked child, before anything is written
  void start();                  // in the parent, after the last fork
  void finish(int64_t drainMs = 2000);

 private:
  void run();
  std::vector<int> readFds_, writeFds_;
  std::vector<std::string> partial_;
  std::thread thread_;
  int stopFd_[2] = {-1, -1};
  int64_t windowNs_;
  std::atomic<int64_t> drainMs_{2000};  // set by finish() before it wakes the thread
};

}  // namespace rdmabench::launch
