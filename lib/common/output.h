#pragma once
// Where a result goes: a file (--output FILE, written atomically) or standard output. Every
// write, the final flush, the fsync, the close and the rename are checked; a failure (ENOSPC on a
// full disk, EIO, EPIPE, a quota) is kept and reported by finish() as one line naming the
// destination and strerror, so a run whose report was lost never exits 0. Thread-safety: one thread
// per ResultOutput.

#include <cstdint>
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
  // `truncateFirst`: ftruncate(fd, 0) just before the first byte is written (an in-place
  // destination keeps its content until the report starts).
  explicit FdStreamBuf(int fd, bool truncateFirst = false);
  int error() const { return error_; }  // first errno of a failed write, 0 = none
  uint64_t bytesPut() const { return written_ + static_cast<uint64_t>(pptr() - pbase()); }
  bool flushAll();  // writes the buffer out; false after any error

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  bool writeAll(const char* p, size_t n);
  int fd_;
  bool truncateFirst_;
  int error_ = 0;
  uint64_t written_ = 0;  // bytes handed to write() successfully
  std::vector<char> buffer_;
};

// Checks, without creating or truncating anything, that `path` could be written by
// ResultOutput: the directory of the (symlink-resolved) file must be writable for the temporary
// file and the rename, and an existing file must open O_WRONLY. For the N-rank commands, whose
// rank 0 opens its report only after the measurement: a bad -o or --plot fails at once, before
// any rank starts. "" and "-" (stdout) pass. Throws UsageError in ResultOutput's words
// ("--output /x/y: cannot open for writing: No such file or directory").
void checkWritable(const std::string& path, const std::string& option);

// A report destination. A regular file (new or existing) is written atomically: the report goes
// to a temporary file in the same directory (common/temp_name.h: ".NAME.rdmabench-HOST-PID.XXXXXX",
// stale ones of dead processes removed), which finish() flushes, fsyncs and
// renames over NAME, so NAME is never empty or truncated: it holds the previous content until
// the new report is complete. A symlink is written through to its target (the link stays; the
// target is replaced), a dangling symlink is refused. A destination that is not a regular file
// (/dev/null, /dev/stdout, a FIFO) is written directly: no rename is possible there; so is an
// existing file whose directory takes no temporary file (not writable, /proc), truncated only
// when the first bytes of the report arrive.
class ResultOutput {
 public:
  // `path` empty or "-": standard output (std::cout is flushed first so earlier lines stay in
  // order). Otherwise the temporary file is created (the existing file keeps its mode); UsageError
  // naming `option` and the path (with strerror) when it cannot be.
  explicit ResultOutput(const std::string& path, const std::string& option = "--output");
  // Without finish(): the temporary file is removed (the destination keeps its old content);
  // stdout and direct destinations are flushed. Never throws.
  ~ResultOutput();
  ResultOutput(const ResultOutput&) = delete;
  ResultOutput& operator=(const ResultOutput&) = delete;

  std::ostream& stream() { return stream_; }
  bool isStdout() const { return fd_ == 1; }
  // Bytes given to stream() so far (buffered or written).
  uint64_t bytesWritten() const;
  // Flushes, fsyncs and closes, renames the temporary file over the destination, and throws
  // SystemError ("writing the report to FILE: No space left on device") when any write, the
  // flush, the fsync, the close or the rename failed (the temporary file is then removed).
  // Idempotent.
  void finish();
  // Whether a failed run writes its error document here. `measured`: the report holds at least
  // one measured row. stdout: always. A file written atomically: only with a measured row, so a
  // run that failed before measuring anything (a usage error, a refused connect, a Ctrl-C or a
  // dead server during the first size) leaves the previous result as it was (docs/cli.md). A
  // direct destination (FIFO, /dev/..., in place): once it received bytes (they are out).
  bool wantsErrorDocument(bool measured) const;
  // For a run that failed, after the reporter recorded the error where wantsErrorDocument(
  // `measured`) said so: such a destination is committed as finish() does (the complete document
  // with the error); an atomic file is otherwise left as it was (the temporary file is removed).
  // stdout is flushed. Never throws (a failure to write is reported on stderr).
  void finishAfterFailure(bool measured) noexcept;

 private:
  void discard() noexcept;
  std::string name_;    // "stdout" or the path, for messages
  std::string target_;  // the file renamed over (symlinks resolved); empty = direct write
  std::string temp_;    // the temporary file while it exists
  int fd_ = -1;
  bool finished_ = false;
  std::unique_ptr<FdStreamBuf> buf_;
  std::ostream stream_;
};

}  // namespace rdmabench
