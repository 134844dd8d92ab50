#include "report/progress.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ostream>

#include "common/units.h"

namespace rdmabench::report {

namespace {

constexpr double kFixedWeightBytes = 16384;  // per-size cost, in bytes-equivalent

std::string clockText(double seconds) {
  auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

class ProgressReporter : public Reporter {
 public:
  ProgressReporter(Reporter& inner, ProgressLine& progress, bool dropAbortMessage)
      : inner_(inner), progress_(progress), dropAbortMessage_(dropAbortMessage) {}
  void begin(const RunInfo& info) override {
    progress_.clear();
    inner_.begin(info);
  }
  void row(const Row& row) override {
    progress_.clear();
    inner_.row(row);
  }
  void end() override {
    progress_.clear();
    inner_.end();
  }
  void abort(const std::string& message) override {
    progress_.clear();
    inner_.abort(dropAbortMessage_ ? std::string() : message);
  }

 private:
  Reporter& inner_;
  ProgressLine& progress_;
  bool dropAbortMessage_;
};

}  // namespace

bool stderrIsTerminal() {
  return isatty(STDERR_FILENO) == 1;
}

bool stdoutSharesStderrTerminal() {
  if (isatty(STDOUT_FILENO) != 1 || isatty(STDERR_FILENO) != 1) return false;
  struct stat out = {};
  struct stat err = {};
  if (::fstat(STDOUT_FILENO, &out) != 0 || ::fstat(STDERR_FILENO, &err) != 0) return false;
  return out.st_rdev == err.st_rdev;
}

ProgressLine::ProgressLine(std::ostream& out, bool enabled, std::vector<uint64_t> sizes,
                           std::function<double()> now)
    : out_(out), enabled_(enabled), sizes_(std::move(sizes)), now_(std::move(now)) {
  if (!now_) {
    now_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
}

ProgressLine::~ProgressLine() {
  clear();
}

double ProgressLine::weight(size_t index, size_t count) const {
  if (sizes_.size() != count || index >= sizes_.size()) return 1.0;
  return kFixedWeightBytes + static_cast<double>(sizes_[index]);
}

std::string ProgressLine::text(size_t index, size_t count, uint64_t bytes, double elapsed) const {
  size_t left = count > index ? count - index - 1 : 0;
  std::string eta = "?";
  if (index > 0) {
    double done = 0, remaining = 0;
    for (size_t i = 0; i < count; ++i)
      (i < index ? done : remaining) += weight(i, count);
    if (done > 0) eta = clockText(elapsed * remaining / done);
  }
  return fmt::format("rdmabench: size {} ({}/{}), {} left, ETA {}", formatSize(bytes), index + 1,
                     count, left, eta);
}

void ProgressLine::sizeStart(size_t index, size_t count, uint64_t bytes) {
  if (!enabled_) return;
  double t = now_();
  if (start_ < 0 || index == 0) start_ = t;
  out_ << '\r' << text(index, count, bytes, t - start_) << "\x1b[K";
  out_.flush();
  shown_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !shown_) return;
  out_ << "\r\x1b[K";
  out_.flush();
  shown_ = false;
}

std::unique_ptr<Reporter> withProgress(Reporter& inner, ProgressLine& progress,
                                       bool dropAbortMessage) {
  return std::make_unique<ProgressReporter>(inner, progress, dropAbortMessage);
}

}  // namespace rdmabench::report
