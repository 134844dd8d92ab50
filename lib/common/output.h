#pragma once
// Where a result goes: a file (--output FILE) or standard output. Every write, the final flush
// and the close are checked; a failure (ENOSPC on a full disk, EIO, EPIPE, a quota) is kept and
// reported by finish() as one line naming the destination and strerror, so a run whose report
// was lost never exits 0. Thread-safety: one thread per ResultOutput.

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace rdmabench {

// A std::streambuf over a file descriptor that records the first write error (errno) instead
// of losing it inside the stream's state bits. 64 KiB buffer.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd);
  int error() const { return error_; }  // first errno of a failed write, 0 = none
  bool flushAll();                      // writes the buffer out; false after any error

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  bool writeAll(const char* p, size_t n);
  int fd_;
  int error_ = 0;
  std::vector<char> buffer_;
};

// Checks, without creating or truncating anything, that `path` could be opened for writing by
// ResultOutput: an existing file must open O_WRONLY, a new one needs a writable directory. For
// the N-rank commands, whose rank 0 opens its report only after the measurement: a bad -o or
// --plot fails at once, before any rank starts. "" and "-" (stdout) pass. Throws UsageError in
// ResultOutput's words ("--output /x/y: cannot open for writing: No such file or directory").
void checkWritable(const std::string& path, const std::string& option);

class ResultOutput {
 public:
  // `path` empty or "-": standard output (std::cout is flushed first so earlier lines stay in
  // order). Otherwise the file is created or truncated; UsageError naming `option` and the
  // path (with strerror) when it cannot be opened.
  explicit ResultOutput(const std::string& path, const std::string& option = "--output");
  // Best effort flush and close; never throws (call finish() to learn about errors).
  ~ResultOutput();
  ResultOutput(const ResultOutput&) = delete;
  ResultOutput& operator=(const ResultOutput&) = delete;

  std::ostream& stream() { return stream_; }
  bool isStdout() const { return fd_ == 1; }
  // Flushes, closes a file, and throws SystemError ("writing the report to FILE: No space
  // left on device") when any write, the flush or the close failed. Idempotent.
  void finish();

 private:
  std::string name_;  // "stdout" or the path, for messages
  int fd_ = -1;
  bool finished_ = false;
  std::unique_ptr<FdStreamBuf> buf_;
  std::ostream stream_;
};

}  // namespace rdmabench
