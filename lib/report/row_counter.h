#pragma once
// A Reporter decorator that counts rows (report/report.h has the call order). Thread-safety: as
// the Reporter it wraps.

#include <cstddef>
#include <string>

#include "report/report.h"

namespace rdmabench::report {

// Forwards every call to `inner` (which must outlive it) and counts the rows. A run that failed
// with rows() == 0 measured nothing: the CLI then leaves an -o FILE as it was
// (ResultOutput::wantsErrorDocument, docs/cli.md "Output files and failures").
class RowCounter final : public Reporter {
 public:
  explicit RowCounter(Reporter& inner) : inner_(inner) {}
  void begin(const RunInfo& info) override { inner_.begin(info); }
  void row(const Row& row) override {
    ++rows_;
    inner_.row(row);
  }
  void end() override { inner_.end(); }
  void abort(const std::string& message) override { inner_.abort(message); }
  size_t rows() const { return rows_; }

 private:
  Reporter& inner_;
  size_t rows_ = 0;
};

}  // namespace rdmabench::report
