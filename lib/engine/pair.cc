#include "engine/pair.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/log.h"
#include "common/measure_clock.h"
#include "common/units.h"
#include "common/version.h"
#include "engine/bandwidth.h"
#include "engine/budget_chunks.h"
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

// ---------------------------------------------------------------------------------------------
// Client

// Longest wait for the server's answer to the hello (capped by --timeout).
constexpr int64_t kHelloAnswerMs = 5000;

// Forked loopback server; killed and reaped on every exit path.
class LoopbackServer {
 public:
  // `needBytes`: the client's buffers per the test, so the forked server's --max-bytes never
  // refuses a size this side was allowed to ask for (`lat -s 1G` works when memory allows).
  LoopbackServer(uint16_t& port, uint64_t needBytes) {
    rendezvous::Listener listener("127.0.0.1", 0);
    port = listener.port();
    std::cout.flush();
    log::flush();
    pid_ = fork();
    if (pid_ < 0) throw SystemError("fork (loopback server)", errno);
    if (pid_ == 0) {
      // A terminal's Ctrl-C reaches the whole process group: only the client acts on it (exit
      // 4) and ends this server's session by telling it; the server racing it with its own
      // "server interrupted" made the client's status 1 at random.
      signal(SIGINT, SIG_IGN);
      int rc = 0;
      try {
        ServerOptions so;
        so.once = true;
        so.verbose = false;
        so.maxTimeoutMs = kMaxTimeoutMs;  // the client's own --timeout applies as given
        so.maxBytes = std::max(so.maxBytes, needBytes);
        detail::serveListener(listener, so);
      } catch (...) {
        rc = 1;
      }
      _exit(rc);
    }
  }
  ~LoopbackServer() {
    if (pid_ <= 0) return;
    for (int i = 0; i < 300; ++i) {  // 3 s for a clean exit, then force
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

 private:
  pid_t pid_ = -1;
};

class Client {
 public:
  Client(const ClientOptions& o, report::Reporter& reporter) : o_(o), reporter_(reporter) {}

  void run() {
    // o_.spec was validated once by its builder (cli::parseClientCommand); the server validates
    // what it receives (TestSpec::fromJson).
    const TestSpec& spec = o_.spec;
    uint16_t port = o_.port;
    std::unique_ptr<LoopbackServer> loopback;
    std::string host = o_.host;
    if (host.empty()) {
      host = "127.0.0.1";
      loopback =
          std::make_unique<LoopbackServer>(port, spec.bytesPerConnection() * spec.queuePairs);
    }
    Channel ch = [&] {
      try {
        return Channel::connect(host, port, Deadline(o_.connectTimeoutMs), loopback != nullptr);
      } catch (const UsageError& e) {  // HOST did not resolve
        if (o_.hostHint.empty()) throw;
        throw UsageError(fmt::format("{} ({})", e.what(), o_.hostHint));
      }
    }();
    try {
      try {
        session(ch);
      } catch (const std::exception& e) {
        rethrowDuring(e, phase_);  // every error names the phase: connect, size N, teardown
      }
    } catch (const std::exception& e) {
      if (!dynamic_cast<const ProtocolError*>(&e))
        tellPeer(ch, fmt::format("client failed: {}", e.what()));
      if (begun_) reporter_.abort(e.what());
      throw;
    }
    // Every row is printed first (with its #wrong); then the run fails.
    if (wrongTotal_ > 0)
      throw Error(
          fmt::format("--check: {} wrong message(s) in the payloads (#wrong column)", wrongTotal_));
  }

 private:
  void session(Channel& ch) {
    const TestSpec& spec = o_.spec;
    // A real server answers the hello at once (its own deadline is 2 s): something else on the
    // port is named within a few seconds, not after the whole --timeout.
    rendezvous::clientHandshake(ch, Deadline(std::min<int64_t>(spec.timeoutMs, kHelloAnswerMs)),
                                o_.token);
    json req = spec.toJson();
    req["provider_env"] = wireEnv();  // the server's session adopts these (adoptWireEnv)
    ch.sendJson(rendezvous::kTestRequest, req, Deadline(spec.timeoutMs));
    transport::DeviceOptions opts = o_.localDevice;
    opts.localHost = ch.localAddress();
    opts.peerHost = ch.peerAddress();
    Side side;  // outlives the handler below: the server hears why before the data path closes
    try {
      sessionWithSide(ch, side, opts);
    } catch (const PeerError&) {
      throw;
    } catch (const TimeoutError& e) {
      // Tagged: the server fails with the same class (docs/wire-protocol.md).
      tellPeer(ch, std::string(rendezvous::kTimeoutTag) + "client failed: " + e.what());
      throw;
    } catch (const InterruptedError&) {
      tellPeer(ch, fmt::format("client interrupted ({})", interruptName()));
      throw;
    } catch (const std::exception& e) {
      // A data path that broke because the server's session died (a provider crash) is
      // reported by the daemon on the control connection within ~100 ms: the server's fate is
      // the cause worth naming.
      serverFate(ch, e);
      tellPeer(ch, fmt::format("client failed: {}", e.what()));
      throw;
    }
  }

  // Waits up to 1 s for an Error frame from the server; when one arrives, throws what it means
  // (rendezvous::throwPeerReport: PeerError, or TimeoutError / UsageError for a tagged report)
  // with the local error appended unless it already carries the server's text.
  static void serverFate(Channel& ch, const std::exception& local) {
    if (ch.fd() < 0) return;
    std::optional<std::string> theirs;
    try {
      Deadline dl(1000);
      while (!theirs && !dl.expired()) {
        if (ch.peekType() == rendezvous::kError)
          theirs = ch.receive(Deadline(1000), "the server's error message").text();
        else
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    } catch (const std::exception&) {
      // EOF or a broken frame: nothing more to learn.
    }
    if (theirs) rendezvous::throwPeerReport("server " + ch.peerName(), *theirs, local.what());
  }

  // The run header: the test, both sides' devices and hosts, the clock and placement facts, and
  // the server's answer (`accept`, untrusted: read through json_read, escaped).
  report::RunInfo runInfo(Channel& ch, Side& side, const json& accept) const {
    const TestSpec& spec = o_.spec;
    report::RunInfo info;
    info.test = reportTest(spec);
    info.transport = spec.transport;
    info.op = toString(spec.op);
    info.bidirectional = spec.bidirectional;
    info.roundTrip = spec.op == Op::kRead;
    info.window = spec.inFlight();
    info.localHost = hostName();
    const std::string what = fmt::format("test accept from {}", ch.peerName());
    info.remoteHost = escapeForLog(jsonString(accept, "host", what, {}, 256), 256);
    info.local = {side.device->info(), side.endpoints[0]->info(), side.device->caps()};
    info.clock = measureClockFacts();
    if (o_.placeThread) info.placement = o_.placeThread(side.device->name());
    // The server's facts, decoded once into the typed structs (bounded; ProtocolError if bad).
    if (const json* dev = jsonObject(accept, "device", what))
      info.remote.device = transport::deviceInfoFromJson(*dev, what);
    if (const json* caps = jsonObject(accept, "caps", what))
      info.remote.caps = transport::capsFromJson(*caps, what);
    info.commandLine = o_.commandLine;
    info.date = isoDateUtc();
    info.toolVersion = version::release();
    info.extra = json{{"server", ch.peerName()},
                      {"server_version", escapeForLog(jsonString(accept, "version", what), 64)},
                      {"queue_pairs", spec.queuePairs},
                      {"timeout_s", static_cast<double>(spec.timeoutMs) / 1000},
                      {"iterations", spec.iterations ? json(spec.iterations) : json("auto")},
                      {"duration_s", spec.durationSec},
                      {"check", spec.check}};
    if (spec.durationSec <= 0 && spec.iterations == 0 && o_.maxTimeSec > 0) {
      // IMB's -time: the header says the automatic counts may be cut, and by what.
      info.extra["iterations"] = fmt::format(
          "auto (OSU's counts; a size that would take over {} s runs fewer, row flag capped: "
          "--max-time, as IMB's -time)",
          o_.maxTimeSec);
      info.extra["max_time_s"] = o_.maxTimeSec;
    }
    // The server caps how long it waits for this client (its --max-timeout): say so when it did.
    const int64_t serverTimeoutMs =
        jsonInt(accept, "timeout_ms", what, spec.timeoutMs, 0, spec.timeoutMs);
    if (serverTimeoutMs < spec.timeoutMs)
      info.extra["server_timeout_s"] = static_cast<double>(serverTimeoutMs) / 1000;
    if (spec.bandwidth()) {
      // One signaled completion per cq_moderation sends (ib_*_bw --cq-mod); ping-pong has none.
      info.extra["cq_moderation"] = spec.cqModeration;
      if (spec.postList != 1) {
        info.extra["post_list"] = spec.postList;
        // Not one doorbell per batch on this transport/op: say what a batch is instead.
        std::string note = side.device->postListNote(opKind(dataOp(spec.op)));
        if (!note.empty()) info.extra["post_list_note"] = std::move(note);
      }
      info.extra["mode"] = toString(spec.mode);
      // Which figure leads: the side that owns the timed interval (docs/metrics.md).
      info.extra["headline"] =
          spec.bidirectional
              ? "client: both directions, first post to delivery of both (osu_bibw)"
              : (spec.op == Op::kRead ? "client (reader): first post to last read completion"
                                      : "client (sender): first post to delivery at the target; "
                                        "peer_BW = the target's own interval");
    }
    if (!o_.transportNote.empty()) info.extra["transport_note"] = o_.transportNote;
    if (!o_.progressNote.empty()) info.extra["progress_note"] = o_.progressNote;
    if (spec.transport == "ofi") {
      // Both sides' wire-relevant libfabric settings: the server ran with the client's.
      json clientEnv = wireEnv();
      std::string server = "server used the client's";
      if (const json* own = jsonObject(accept, "provider_env_own", what);
          own && own->size() <= kMaxWireEnv && *own != clientEnv)
        server += fmt::format(" (its own: {})", describeEnv(*own));
      info.extra["provider_env"] = fmt::format("client {}; {}", describeEnv(clientEnv), server);
    }
    return info;
  }

  void sessionWithSide(Channel& ch, Side& side, const transport::DeviceOptions& opts) {
    const TestSpec& spec = o_.spec;
    auto dl = [&] { return Deadline(spec.timeoutMs); };
    // This side's device first (its own option errors, e.g. --ib-port out of range, name the
    // option here, not as the server's report), then the server's verdict: a refusal (its
    // --max-bytes, an unknown transport) arrives before this side allocates and registers the
    // buffers of the largest size.
    openSideDevice(side, spec, opts, "local");
    json accept = expectJson(ch, rendezvous::kTestAccept, Deadline(spec.timeoutMs),
                             "the server to open its device");
    allocateSide(side, spec);
    ch.sendJson(rendezvous::kAddresses, addressesJson(side), dl());
    json remote = expectJson(ch, rendezvous::kAddresses, Deadline(spec.timeoutMs),
                             "server connection addresses");
    connectSide(side, remote, Deadline(spec.timeoutMs), ch.peerName());

    reporter_.begin(runInfo(ch, side, accept));
    begun_ = true;

    Progress progress(*side.device, spec.timeoutMs, controlWatchdog(ch), progressPeer(ch, side),
                      opts.progress);
    try {
      measureSizes(ch, side, progress);
    } catch (const std::exception&) {
      phase_ = progress.where();
      throw;
    }
    phase_ = "teardown";
    testHold("teardown", -1, phase_);
    ch.send(rendezvous::kDone, std::string_view(), Deadline(spec.timeoutMs));
    reporter_.end();
  }

  // One size's measurement, summed over the runs (chunks) it took.
  struct Measured {
    stats::SampleSet samples;  // lat: samples of every chunk
    double seconds = 0;        // measured time, all chunks
    double megabytes = 0;      // bw: MB moved (10^6 B), all chunks (both directions if bidir)
    double messages = 0;       // bw: messages counted in msg_per_s
    uint64_t bwMessages = 0;   // bw: messages this side sent (or received), all connections
    uint64_t wrong = 0;        // --check: both sides
    double peerSeconds = 0, peerMegabytes = 0;
    bool peerLate = false;  // a chunk's peer interval was not a measurement (peerIntervalUsable)
    uint64_t iterations = 0;
    DeschedDelta desched;  // what this side's loops lost, all chunks (common/desched.h)
    GapStats stall;        // bw: this side's longest pause, all chunks (common/stall.h)
    // bw: segments this side's data connections retransmitted, all chunks (socket's TCP_INFO;
    // Endpoint::retransmits); empty = the transport does not say.
    std::optional<uint64_t> retransmits;
  };

  // Retransmitted segments of this side's data connections so far (untimed: a system call per
  // connection); empty when the transport does not say.
  static std::optional<uint64_t> retransmitsOf(const Side& side) {
    std::optional<uint64_t> sum;
    for (const Link& l : side.links)
      if (const std::optional<uint64_t> r = l.endpoint->retransmits()) sum = sum.value_or(0) + *r;
    return sum;
  }

  // Row::flags: "short" (timed over less than kShortIntervalSec), "capped" (cut by --max-time),
  // "peer_late" (peer_BW not shown: peerIntervalUsable).
  static std::vector<std::string> flagsOf(const Measured& m, bool capped) {
    std::vector<std::string> f;
    if (m.seconds < report::kShortIntervalSec) f.push_back("short");
    if (capped) f.push_back("capped");
    if (m.peerLate) f.push_back("peer_late");
    return f;
  }

  // Row::stalled: a flagged size's figures (common/stall.h) with the retransmits when the
  // transport says them; null when not flagged.
  static json stallOf(const Measured& m) {
    if (!m.stall.stalled()) return nullptr;
    json j = m.stall.toJson();
    if (m.retransmits) j["tcp_retransmits"] = *m.retransmits;
    return j;
  }

  void runChunk(Channel& ch, Side& side, Progress& progress, const SizeRun& run, Measured& m) {
    SizeResult peer;
    const std::optional<uint64_t> before = o_.spec.latency() ? std::nullopt : retransmitsOf(side);
    const uint64_t start = before.value_or(0);
    const SizeResult mine = runOneSize(ch, side, progress, run, m.samples, peer);
    if (before)
      if (const std::optional<uint64_t> after = retransmitsOf(side))
        m.retransmits = m.retransmits.value_or(0) + (*after >= start ? *after - start : 0);
    m.iterations += run.iterations;
    m.desched += mine.desched;
    m.stall.add(mine.stall);
    m.seconds += mine.seconds;
    m.wrong += mine.wrong + peer.wrong;
    if (o_.spec.latency()) return;
    m.megabytes += mine.megabytesPerSec * mine.seconds;
    m.messages += mine.messagesPerSec * mine.seconds;
    m.bwMessages += mine.messages;
    if (peer.megabytesPerSec > 0 && peer.seconds > 0) {
      if (!mine.target && !peerIntervalUsable(mine.seconds, peer.seconds)) {
        m.peerLate = true;
      } else {
        m.peerMegabytes += peer.megabytesPerSec * peer.seconds;
        m.peerSeconds += peer.seconds;
      }
    }
  }

  // Seconds per iteration of `run`, measured by running it (a calibration: warmup that is
  // timed, never reported as a measurement; its --check findings go into `m`).
  double calibrate(Channel& ch, Side& side, Progress& progress, const SizeRun& run, Measured& m) {
    Measured cal;
    runChunk(ch, side, progress, run, cal);
    m.wrong += cal.wrong;
    return cal.seconds / static_cast<double>(std::max<uint64_t>(run.iterations, 1));
  }

  void measureSizes(Channel& ch, Side& side, Progress& progress) {
    const TestSpec& spec = o_.spec;
    uint64_t largestPassed = 0;  // largest size that completed (for the path-MTU hint)
    const bool budget = spec.durationSec <= 0 && spec.iterations == 0 && o_.maxTimeSec > 0;
    for (size_t index = 0; index < spec.sizes.size(); ++index) {
      const uint64_t bytes = spec.sizes[index];
      if (o_.onSizeStart) o_.onSizeStart(index, spec.sizes.size(), bytes);
      SizeRun run{bytes, spec.iterationsFor(bytes), spec.warmupFor(bytes)};
      uint64_t warmupReported = run.warmup;
      Measured m;
      bool capped = false;
      try {
        if (spec.durationSec > 0) {
          // -D: the warmup (at least 10) timed as a calibration, then chunks by the clock.
          SizeRun cal{bytes, std::max<uint64_t>(run.warmup, 10), 0};
          warmupReported = cal.iterations;
          DurationChunks chunks(spec.durationSec, calibrate(ch, side, progress, cal, m),
                                cal.iterations);
          for (uint64_t n = chunks.next(); n > 0; n = chunks.next()) {
            const double before = m.seconds;
            runChunk(ch, side, progress, SizeRun{bytes, n, 0}, m);
            chunks.record(n, m.seconds - before);
          }
        } else {
          if (budget) {
            // --max-time (IMB's -time): OSU's count in chunks, checked against the running clock
            // after each, so the budget ends a size that turned out slow and a warmup that ran
            // slow does not cut a fast size short (the warmup is the first estimate only).
            SizeRun cal{bytes, std::max<uint64_t>(run.warmup, 1), 0};
            warmupReported = cal.iterations;
            BudgetChunks chunks(o_.maxTimeSec, calibrate(ch, side, progress, cal, m),
                                cal.iterations, run.iterations);
            for (uint64_t n = chunks.next(); n > 0; n = chunks.next()) {
              const double before = m.seconds;
              runChunk(ch, side, progress, SizeRun{bytes, n, 0}, m);
              chunks.record(n, m.seconds - before);
            }
            capped = chunks.capped();
          } else {
            runChunk(ch, side, progress, run, m);
          }
        }
      } catch (const TransportError& e) {
        // Smaller sizes passed and this one exceeded the retry count: name the path MTU.
        if (spec.transport != "verbs" || largestPassed == 0 || side.links.empty()) throw;
        const uint64_t mtu = side.links[0].endpoint->info().common.mtu.value_or(0);
        std::string hint = pathMtuHint(largestPassed, bytes, mtu, e.what());
        if (hint.empty()) throw;
        throw TransportError(e.what() + hint);
      }
      report::Row row;
      row.bytes = bytes;
      row.iterations = m.iterations;
      row.warmup = warmupReported;
      row.seconds = m.seconds;
      if (spec.latency()) {
        row.latency = m.samples.summarize();
        row.messages = m.iterations;
      } else if (m.seconds > 0) {
        row.megabytesPerSec = m.megabytes / m.seconds;
        row.messagesPerSec = m.messages / m.seconds;
        row.messages = m.bwMessages / spec.queuePairs;
        if (m.peerSeconds > 0 && !m.peerLate)
          row.peerMegabytesPerSec = m.peerMegabytes / m.peerSeconds;
      }
      if (spec.check) row.wrong = m.wrong;
      row.flags = flagsOf(m, capped);
      if (row.wrong) wrongTotal_ += *row.wrong;
      if (m.desched.lostCpu()) row.descheduled = m.desched.toJson();
      row.stalled = stallOf(m);
      reporter_.row(row);
      largestPassed = std::max(largestPassed, bytes);
    }
  }

  // One run of a size on both sides: this side's result, and the server's in `peer`.
  SizeResult runOneSize(Channel& ch, Side& side, Progress& progress, const SizeRun& run,
                        stats::SampleSet& samples, SizeResult& peer) {
    const TestSpec& spec = o_.spec;
    zeroReceiveAreas(side);
    progress.setStage(fmt::format("size {}", run.bytes));
    progress.setWarmup(run.warmup > 0);
    ch.sendJson(rendezvous::kSizeStart,
                json{{"bytes", run.bytes}, {"iterations", run.iterations}, {"warmup", run.warmup}},
                Deadline(spec.timeoutMs));
    expectJson(ch, rendezvous::kSizeReady, Deadline(spec.timeoutMs),
               fmt::format("the server to get ready for size {}", run.bytes));
    SizeResult mine = runSize(spec, side, progress, run, true, &samples);
    peer = decodeSizeResult(expectJson(ch, rendezvous::kSizeResult, Deadline(spec.timeoutMs),
                                       fmt::format("the server's result for size {}", run.bytes)),
                            "the server's size result");
    return mine;
  }

  const ClientOptions& o_;
  report::Reporter& reporter_;
  bool begun_ = false;
  std::string phase_ = "connect";  // named by errors raised outside the data path
  uint64_t wrongTotal_ = 0;        // --check: wrong messages over all sizes, both sides
};

}  // namespace

report::Test reportTest(const TestSpec& spec) {
  return spec.bandwidth() ? report::Test::kBw : report::Test::kLat;
}

void runClient(const ClientOptions& options, report::Reporter& reporter) {
  Client(options, reporter).run();
}

}  // namespace rdmabench::engine
