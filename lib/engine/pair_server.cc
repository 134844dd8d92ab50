// The server's half of a point-to-point session (docs/wire-protocol.md): handshake, the test
// description within the server's caps, one side opened and connected, sizes as the client
// asks. Runs in the session's own child process (server.cc).
#include "common/version.h"
#include "engine/pair.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <new>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/log.h"
#include "common/measure_clock.h"
#include "common/units.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/hints.h"
#include "engine/link.h"
#include "engine/pair_side.h"
#include "engine/pattern.h"
#include "engine/pingpong.h"
#include "engine/progress.h"
#include "engine/session.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"
#include "transport/info_json.h"

namespace rdmabench::engine {
namespace {

using namespace pairing;
using nlohmann::json;
using rendezvous::Channel;
using rendezvous::expectJson;
using rendezvous::Frame;

void serveWithSide(Channel& ch, const TestSpec& spec, const transport::DeviceOptions& opts,
                   Side& side, const json& ownEnv);
void connectServerSide(Channel& ch, const TestSpec& spec, const transport::DeviceOptions& opts,
                       Side& side, const json& ownEnv);
void serveSizes(Channel& ch, const TestSpec& spec, Side& side, Progress& progress);

// This session's RLIMIT_DATA (limitSessionMemory); 0 = none.
uint64_t sessionMemoryLimit = 0;

void serveSessionImpl(Channel& ch, const ServerOptions& so, uint64_t session,
                      const detail::AdmitFn& admit, const detail::HelloFn& helloDone) {
  rendezvous::serverHandshake(ch, Deadline(so.helloTimeoutMs), so.token);
  if (helloDone) helloDone();
  json req =
      expectJson(ch, rendezvous::kTestRequest, Deadline(so.helloTimeoutMs), "test description");
  TestSpec spec = TestSpec::fromJson(req);
  // The client's timeout bounds how long this session waits for it: capped by the server.
  spec.timeoutMs = std::min(spec.timeoutMs, so.maxTimeoutMs);
  uint64_t need = spec.bytesPerConnection() * spec.queuePairs;
  if (need > so.maxBytes)
    throw UsageError(fmt::format(
        "test needs {} bytes of buffers on the server ({} connection(s) x {} bytes), above the "
        "server's --max-bytes {}",
        need, spec.queuePairs, spec.bytesPerConnection(), so.maxBytes));
  if (admit) admit(spec);
  detail::testAllocHook();
  if (so.verbose)
    log::write(fmt::format("rdmabench server: session {}: {} {} {} from {}\n", session,
                           toString(spec.test), escapeForLog(spec.transport, 64), toString(spec.op),
                           ch.peerName()));
  transport::DeviceOptions opts = spec.serverDevice;
  // The target of a one-sided verbs bw (write/read, one direction) has nothing to do until the
  // initiator's closing control message: the HCA places the data. It sleeps on completion events,
  // like perftest's ib_write_bw / ib_read_bw server (blocked in a socket read), instead of busy
  // polling a core that a loopback initiator needs (rxe in the 4-vCPU TCG VM, write 64 KiB
  // stream: 34-38 MB/s with a spinning target, 46-50 with a sleeping one, ib_write_bw 48-52).
  // Socket and ofi targets progress the emulated writes themselves and keep the client's mode.
  if (spec.bandwidth() && spec.transport == "verbs" && !spec.bidirectional && spec.oneSided())
    opts.progress = transport::ProgressMode::kEvent;
  opts.localHost = ch.localAddress();
  opts.peerHost = ch.peerAddress();
  // Never connect to an address the client names (socket, ofi FI_EP_MSG): the client connects.
  opts.acceptOnly = true;
  // This process is the session's own child (server.cc), so the environment is ours to change;
  // first the server's allowlist and --max-bytes bound what the client's variables may size.
  const json* requestedEnv = jsonObject(req, "provider_env", "test description");
  checkWireEnv(requestedEnv, fmt::format("provider_env from {}", ch.peerName()));
  boundWireEnv(requestedEnv, WireEnvBudget{so.maxBytes, need},
               fmt::format("provider_env from {}", ch.peerName()));
  json ownEnv = adoptWireEnv(requestedEnv, ch.peerName());
  Side side;  // outlives the handler below: the client hears why before the data path closes
  try {
    serveWithSide(ch, spec, opts, side, ownEnv);
  } catch (const InterruptedError&) {
    tellPeer(ch, fmt::format("server interrupted ({})", interruptName()));
    throw;
  } catch (const std::exception& e) {
    tellPeer(ch, detail::sessionErrorText(e));
    throw;
  }
}

void serveWithSide(Channel& ch, const TestSpec& spec, const transport::DeviceOptions& opts,
                   Side& side, const json& ownEnv) {
  try {  // every error names the phase: connect, size N, teardown
    connectServerSide(ch, spec, opts, side, ownEnv);
  } catch (const std::exception& e) {
    rethrowDuring(e, "connect");
  }
  Progress progress(*side.device, spec.timeoutMs, controlWatchdog(ch), progressPeer(ch, side),
                    opts.progress);
  try {
    serveSizes(ch, spec, side, progress);
  } catch (const std::exception& e) {
    rethrowDuring(e, progress.where());
  }
}

void connectServerSide(Channel& ch, const TestSpec& spec, const transport::DeviceOptions& opts,
                       Side& side, const json& ownEnv) {
  auto dl = [&] { return Deadline(spec.timeoutMs); };
  openSide(side, spec, opts, "server");
  ch.sendJson(rendezvous::kTestAccept,
              json{{"host", hostName()},
                   {"version", version::release()},
                   {"device", transport::toJson(side.device->info())},
                   {"caps", transport::toJson(side.device->caps())},
                   {"timeout_ms", spec.timeoutMs},  // after the cap of --max-timeout
                   {"provider_env_own", ownEnv}},
              dl());
  testHold("connect", -1, "connect");
  ch.sendJson(rendezvous::kAddresses, addressesJson(side), dl());
  json remote = expectJson(ch, rendezvous::kAddresses, Deadline(spec.timeoutMs),
                           "client connection addresses");
  connectSide(side, remote, Deadline(spec.timeoutMs), ch.peerName());
}

void serveSizes(Channel& ch, const TestSpec& spec, Side& side, Progress& progress) {
  auto dl = [&] { return Deadline(spec.timeoutMs); };
  for (size_t sizesRun = 0;; ++sizesRun) {
    // After the last size (known without --duration, which runs each size twice) only the end
    // of the test may follow: a client lost there is lost in teardown.
    const bool last = spec.durationSec == 0 && sizesRun >= spec.sizes.size();
    if (last) progress.setStage("teardown");
    Frame f = ch.receive(Deadline(spec.timeoutMs),
                         last ? "the end of the test" : "the next size or the end of the test");
    if (f.type == rendezvous::kDone) return;
    if (f.type == rendezvous::kError)
      rendezvous::throwPeerReport("client " + ch.peerName(), f.text());
    if (f.type != rendezvous::kSizeStart)
      throw ProtocolError(
          fmt::format("client {} sent unexpected message type {}", ch.peerName(), f.type));
    const std::string what = fmt::format("size start from {}", ch.peerName());
    SizeRun run = decodeSizeStart(rendezvous::parseFrameJson(f, what), spec, what);
    zeroReceiveAreas(side);
    stampReadSource(side, spec, run.bytes);
    // "Size ready" goes out only once this side's first receives are posted: a client told
    // earlier sends into an empty receive queue, and soft-RoCE fails a send that waits on RNR
    // for about a second (transport retry counter exceeded), e.g. behind a slow or held server.
    auto ready = [&] {
      ch.sendJson(rendezvous::kSizeReady, json::object(), dl());
      detail::testCrashHook(run.bytes);
      const std::string where = fmt::format("size {}", run.bytes);
      if (sizesRun == 0 && run.warmup > 0) testHold("warmup", -1, where + ", warmup");
      if (sizesRun == 1) testHold("mid-run", -1, where);
    };
    const SizeResult result = runSize(spec, side, progress, run, false, nullptr, ready);
    ch.sendJson(rendezvous::kSizeResult, encodeSizeResult(result, spec.test),
                Deadline(spec.timeoutMs));
  }
}

}  // namespace

namespace detail {

void serveSession(Channel& ch, const ServerOptions& so, uint64_t session, const AdmitFn& admit,
                  const HelloFn& helloDone) {
  serveSessionImpl(ch, so, session, admit, helloDone);
}

namespace {

// This process's data size (VmData: private writable mappings, what RLIMIT_DATA counts), bytes;
// 0 when /proc is unreadable.
uint64_t dataBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmData:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 10) * 1024;
  return 0;
}

}  // namespace

uint64_t limitSessionMemory(uint64_t maxBytes) {
  // RLIMIT_DATA rather than RLIMIT_AS: it counts private writable mappings (heap, anonymous
  // mmaps, thread stacks, registered buffers) but not libraries, device doorbell pages, shm
  // regions or the reserved-but-inaccessible address space of glibc's per-thread malloc arenas
  // (64 MiB each), which RLIMIT_AS would charge a session several times over.
  const uint64_t now = dataBytes();
  if (now == 0) return 0;
  uint64_t limit = now + kSessionBaselineBytes;
  limit = maxBytes > UINT64_MAX - limit ? UINT64_MAX : limit + maxBytes;
  rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  if (setrlimit(RLIMIT_DATA, &rl) != 0) return 0;
  sessionMemoryLimit = limit;
  return limit;
}

std::string sessionErrorText(const std::exception& e) {
  if (sessionMemoryLimit) {
    const bool badAlloc = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    const std::string what = e.what();
    if (badAlloc || what.find(std::strerror(ENOMEM)) != std::string::npos) {
      std::string text =
          fmt::format("server: session memory limit ({} MiB from --max-bytes) reached",
                      sessionMemoryLimit >> 20);
      if (!badAlloc) text += fmt::format(" ({})", escapeForLog(what, 300));
      return text;
    }
  }
  return rendezvous::errorFrameText(e);
}

void tellPeer(Channel& ch, const std::string& message) {
  pairing::tellPeer(ch, message);
}

void testAllocHook() {
  const char* mib = std::getenv("RDMABENCH_TEST_SESSION_ALLOC_MIB");
  if (!mib || !*mib) return;
  // Touched page by page: an allocation the server's checks did not foresee.
  const size_t bytes = std::strtoull(mib, nullptr, 10) << 20;
  std::vector<char> block(bytes);
  for (size_t i = 0; i < bytes; i += 4096)
    block[i] = 1;
  log::write(fmt::format("rdmabench server: test hook: allocated {} MiB\n", bytes >> 20));
}

void testCrashHook(uint64_t bytes) {
  const char* at = std::getenv("RDMABENCH_TEST_SESSION_CRASH_AT");
  if (at && *at && std::to_string(bytes) == at) raise(SIGSEGV);
}

}  // namespace detail

}  // namespace rdmabench::engine
