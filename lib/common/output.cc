#include "common/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/log.h"
#include "common/temp_name.h"

namespace rdmabench {

FdStreamBuf::FdStreamBuf(int fd, bool truncateFirst)
    : fd_(fd), truncateFirst_(truncateFirst), buffer_(64 * 1024) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreamBuf::writeAll(const char* p, size_t n) {
  if (truncateFirst_ && n > 0) {
    truncateFirst_ = false;
    // /proc files refuse it: the write below reports the error. A named result, not (void):
    // with _FORTIFY_SOURCE (Release, cmake/Hardening.cmake) glibc declares ftruncate
    // warn_unused_result, which GCC does not let a cast silence.
    [[maybe_unused]] const int truncated = ::ftruncate(fd_, 0);
  }
  while (n > 0 && error_ == 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      break;
    }
    if (w == 0) {
      error_ = EIO;
      break;
    }
    p += w;
    n -= static_cast<size_t>(w);
    written_ += static_cast<uint64_t>(w);
  }
  return error_ == 0;
}

bool FdStreamBuf::flushAll() {
  const size_t n = static_cast<size_t>(pptr() - pbase());
  bool ok = writeAll(pbase(), n);
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return ok;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type ch) {
  if (!flushAll()) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int FdStreamBuf::sync() {
  return flushAll() ? 0 : -1;
}

std::streamsize FdStreamBuf::xsputn(const char* s, std::streamsize n) {
  if (error_) return 0;
  const auto room = epptr() - pptr();
  if (n <= room) {
    std::memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!flushAll()) return 0;
  if (static_cast<size_t>(n) >= buffer_.size()) return writeAll(s, static_cast<size_t>(n)) ? n : 0;
  std::memcpy(pptr(), s, static_cast<size_t>(n));
  pbump(static_cast<int>(n));
  return n;
}

namespace {

std::string dirOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::string baseOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

[[noreturn]] void refuseOpen(const std::string& option, const std::string& path, int err) {
  throw UsageError(
      fmt::format("{} {}: cannot open for writing: {}", option, path, std::strerror(err)));
}

// Where an atomic write of `path` lands: "" for a destination that is not a regular file
// (written directly), else the file itself with symlinks resolved. Throws UsageError for a
// dangling symlink, an unreadable path or an existing file this user may not write.
struct Destination {
  bool direct = false;  // not a regular file: write in place
  bool exists = false;
  mode_t mode = 0;
  std::string target;
};

Destination resolveDestination(const std::string& path, const std::string& option) {
  Destination d;
  d.target = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat lst {};
    if (err == ENOENT && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
      throw UsageError(fmt::format(
          "{} {}: a symlink to a missing file: give the path of the file to write", option, path));
    if (err != ENOENT) refuseOpen(option, path, err);
    return d;
  }
  d.exists = true;
  d.mode = st.st_mode & 07777;
  if (!S_ISREG(st.st_mode)) {
    d.direct = true;
    return d;
  }
  // A symlink (latest.json -> runs/42.json) is written through: its target is replaced and the
  // link keeps pointing at it (renaming over the link would turn it into a plain file).
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    d.target = real;
    std::free(real);
  } else {
    refuseOpen(option, path, errno);
  }
  if (::access(d.target.c_str(), W_OK) != 0) refuseOpen(option, path, errno);
  return d;
}

}  // namespace

void checkWritable(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return;
  Destination d = resolveDestination(path, option);
  if (d.direct) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno != ENXIO) refuseOpen(option, path, errno);  // ENXIO: FIFO, no reader yet
    if (fd >= 0) ::close(fd);
    return;
  }
  if (::access(dirOf(d.target).c_str(), W_OK | X_OK) == 0) return;
  const int err = errno;
  if (d.exists) return;  // written in place (ResultOutput: no temporary file possible there)
  refuseOpen(option, path, err);
}

ResultOutput::ResultOutput(const std::string& path, const std::string& option) : stream_(nullptr) {
  if (path.empty() || path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    fd_ = 1;
    name_ = "stdout";
  } else {
    name_ = path;
    Destination d = resolveDestination(path, option);
    if (d.direct) {
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) refuseOpen(option, path, errno);
    } else {
      std::string templ = reportTempTemplate(dirOf(d.target), baseOf(d.target));
      fd_ = ::mkostemp(templ.data(), O_CLOEXEC);
      if (fd_ < 0 && d.exists) {
        // No temporary file next to it (a directory this user may not write, /proc): the
        // existing file is written in place, truncated only when the first bytes arrive.
        fd_ = ::open(d.target.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0) refuseOpen(option, path, errno);
        buf_ = std::make_unique<FdStreamBuf>(fd_, true);
        stream_.rdbuf(buf_.get());
        return;
      }
      if (fd_ < 0) refuseOpen(option, path, errno);
      temp_ = templ;
      target_ = d.target;
      mode_t mode = d.mode;
      if (!d.exists) {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
      }
      ::fchmod(fd_, mode);  // mkstemp creates 0600; best effort
    }
  }
  buf_ = std::make_unique<FdStreamBuf>(fd_);
  stream_.rdbuf(buf_.get());
}

ResultOutput::~ResultOutput() {
  if (finished_) return;
  if (!temp_.empty()) {
    discard();
    return;
  }
  buf_->flushAll();
  if (fd_ > 2) ::close(fd_);
}

uint64_t ResultOutput::bytesWritten() const {
  return buf_->bytesPut();
}

void ResultOutput::discard() noexcept {
  finished_ = true;
  stream_.rdbuf(nullptr);  // a reporter's late write (JSON closing itself) goes nowhere
  if (fd_ > 2) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

void ResultOutput::finish() {
  if (finished_) return;
  finished_ = true;
  buf_->flushAll();
  int err = buf_->error();
  if (err == 0 && stream_.bad()) err = EIO;
  if (fd_ > 2) stream_.rdbuf(nullptr);  // closed below: a late write must not reach its number
  if (fd_ > 2) {
    // The data reaches the disk before the rename makes it the destination's content.
    if (!temp_.empty() && err == 0 && ::fsync(fd_) != 0) err = errno;
    // close() reports delayed write errors (NFS, quotas); EINTR still closed the descriptor.
    if (::close(fd_) != 0 && err == 0 && errno != EINTR) err = errno;
    fd_ = -1;
  }
  if (err == 0 && !temp_.empty() && ::rename(temp_.c_str(), target_.c_str()) != 0) err = errno;
  if (err != 0) {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
    throw SystemError(fmt::format("writing the report to {}", name_), err);
  }
  if (!temp_.empty()) {
    temp_.clear();
    // The rename itself is durable once the directory is synced (best effort).
    const int dir = ::open(dirOf(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
}

bool ResultOutput::wantsErrorDocument(bool measured) const {
  if (isStdout()) return true;
  if (!temp_.empty()) return measured;
  return bytesWritten() > 0;
}

void ResultOutput::finishAfterFailure(bool measured) noexcept {
  if (finished_) return;
  if (!temp_.empty() && (!measured || bytesWritten() == 0)) {
    discard();  // nothing measured: the previous file stays as it was
    return;
  }
  try {
    finish();
  } catch (const std::exception& e) {
    log::write(std::string("rdmabench: error: ") + e.what() + "\n");
  }
}

}  // namespace rdmabench
