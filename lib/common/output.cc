#include "common/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench {

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd), buffer_(64 * 1024) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreamBuf::writeAll(const char* p, size_t n) {
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

void checkWritable(const std::string& path, const std::string& option) {
  if (path.empty() || path == "-") return;
  auto refuse = [&](int err) {
    throw UsageError(
        fmt::format("{} {}: cannot open for writing: {}", option, path, std::strerror(err)));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  if (errno != ENOENT) refuse(errno);
  const size_t slash = path.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse(errno);
}

ResultOutput::ResultOutput(const std::string& path, const std::string& option) : stream_(nullptr) {
  if (path.empty() || path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    fd_ = 1;
    name_ = "stdout";
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0)
      throw UsageError(
          fmt::format("{} {}: cannot open for writing: {}", option, path, std::strerror(errno)));
    name_ = path;
  }
  buf_ = std::make_unique<FdStreamBuf>(fd_);
  stream_.rdbuf(buf_.get());
}

ResultOutput::~ResultOutput() {
  if (finished_) return;
  buf_->flushAll();
  if (fd_ > 2) ::close(fd_);
}

void ResultOutput::finish() {
  if (finished_) return;
  finished_ = true;
  buf_->flushAll();
  int err = buf_->error();
  if (fd_ > 2) {
    // close() reports delayed write errors (NFS, quotas); EINTR still closed the descriptor.
    if (::close(fd_) != 0 && err == 0 && errno != EINTR) err = errno;
  }
  if (err == 0 && stream_.bad()) err = EIO;
  if (err != 0) throw SystemError(fmt::format("writing the report to {}", name_), err);
}

}  // namespace rdmabench
