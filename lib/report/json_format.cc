// "json": one JSON document per run, streamed so that a long sweep shows its rows as they come
// and the document is closed (valid) by end(), abort() or, failing both, the destructor:
//
//   {"tool":"rdmabench","version":"0.2.0","run":{...},"rows":[
//   {"bytes":2,...},
//   {"bytes":4,...}
//   ],"error":"only after abort()"}

#include <ostream>

#include "report/format_util.h"

namespace rdmabench::report::detail {
namespace {

class JsonReporter : public Reporter {
 public:
  explicit JsonReporter(std::ostream& out) : out_(out) {}
  ~JsonReporter() override {
    if (open_) {
      try {
        abort("report not finished: the run ended without end() or abort()");
      } catch (...) {  // never throw from a destructor
      }
    }
  }

  void begin(const RunInfo& info) override {
    if (open_ || closed_) return;
    open_ = true;
    out_ << R"({"tool":"rdmabench","version":)" << dumpJson(toolVersion(info)) << R"(,"run":)"
         << dumpJson(runJson(info)) << R"(,"rows":[)";
    out_.flush();
  }

  void row(const Row& row) override {
    if (closed_) return;
    if (!open_) begin(RunInfo{});
    out_ << (rows_++ == 0 ? "\n" : ",\n") << dumpJson(rowJson(row));
    out_.flush();
  }

  void end() override { close(nullptr); }
  void abort(const std::string& message) override { close(&message); }

 private:
  void close(const std::string* error) {
    if (closed_) return;
    if (!open_) begin(RunInfo{});
    out_ << "\n]";
    if (error) out_ << R"(,"error":)" << dumpJson(*error);
    out_ << "}\n";
    out_.flush();
    open_ = false;
    closed_ = true;
  }

  std::ostream& out_;
  bool open_ = false, closed_ = false;
  uint64_t rows_ = 0;
};

}  // namespace

std::unique_ptr<Reporter> makeJsonReporter(std::ostream& out, const ReportOptions& /*options*/) {
  return std::make_unique<JsonReporter>(out);
}

}  // namespace rdmabench::report::detail
