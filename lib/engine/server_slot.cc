// The server's test slot and child-process facts (server_slot.h).
#include "engine/server_slot.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <thread>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"

namespace rdmabench::engine::detail {

const char* const kOnceBusy =
    "server busy: this server was started with --once and its one test is running; start "
    "another server (or run it without --once)";

void askAdmission(int fd, uint32_t maxConnections) {
  if (::send(fd, &kAskAdmission, 1, MSG_NOSIGNAL) != 1)
    throw SystemError("server session: asking the daemon for admission", errno);
  const Deadline deadline(2000);
  char a = 0;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int left = deadline.remainingMs();
    if (::poll(&p, 1, std::min(left, 50)) > 0) {
      if (::recv(fd, &a, 1, 0) != 1) a = 0;
      break;
    }
    throwIfInterrupted("the daemon's admission");
    if (deadline.expired()) break;
  }
  ::close(fd);
  if (a == kAdmitted) return;
  if (a == kRefused)
    throw Error(
        fmt::format("server busy: {} sessions in progress (--max-connections {}), retry "
                    "later",
                    maxConnections, maxConnections));
  if (a == kRefusedOnce) throw Error(kOnceBusy);
  throw Error("server session: the daemon did not answer its admission request within 2 s");
}

SharedSlot::SharedSlot() {
  void* p =
      mmap(nullptr, sizeof(TestSlot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw SystemError("mmap (server test slot)", errno);
  slot_ = new (p) TestSlot{};
}

SharedSlot::~SharedSlot() {
  munmap(slot_, sizeof(TestSlot));
}

void SharedSlot::take(const std::string& description, int64_t graceMs, bool once) {
  if (once && slot_->first.load() != 0) throw Error(kOnceBusy);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(graceMs);
  for (;;) {
    int32_t expected = 0;
    if (slot_->owner.compare_exchange_strong(expected, static_cast<int32_t>(getpid()))) break;
    if (std::chrono::steady_clock::now() >= until) {
      std::string running = slot_->described.load() ? std::string(slot_->what) : "a test";
      throw Error(fmt::format("server busy: running {}, retry later", running));
    }
    throwIfInterrupted("a running test to end");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int32_t none = 0;
  if (!slot_->first.compare_exchange_strong(none, static_cast<int32_t>(getpid())) && once) {
    // Another --once session took the slot first and has already finished its test.
    release(getpid());
    throw Error(kOnceBusy);
  }
  std::snprintf(slot_->what, sizeof slot_->what, "%s", description.c_str());
  slot_->described.store(1);
}

bool SharedSlot::release(pid_t pid) {
  int32_t expected = static_cast<int32_t>(pid);
  if (slot_->owner.load() != expected) return false;
  slot_->described.store(0);
  return slot_->owner.compare_exchange_strong(expected, 0);
}

std::string processState(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  auto paren = line.rfind(')');
  if (paren != std::string::npos && paren + 2 < line.size() &&
      (line[paren + 2] == 'T' || line[paren + 2] == 't'))
    return "stopped (SIGSTOP)";
  return "running";
}

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace rdmabench::engine::detail
