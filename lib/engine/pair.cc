#include "engine/pair.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/measure_clock.h"
#include "common/units.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/hints.h"
#include "engine/link.h"
#include "engine/pattern.h"
#include "engine/pingpong.h"
#include "engine/progress.h"
#include "engine/session.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"

extern char** environ;

namespace rdmabench::engine {
namespace {

using nlohmann::json;
using rendezvous::Channel;
using rendezvous::expectJson;
using rendezvous::Frame;

// Everything one side holds for a session. Member order = teardown order reversed: endpoints
// go first, then connectors, memory regions, buffers and finally the device.
struct Side {
  std::unique_ptr<transport::Device> device;
  BufferLayout layout;
  std::vector<AlignedBuffer> buffers;
  std::vector<std::unique_ptr<transport::MemoryRegion>> regions;
  std::vector<std::unique_ptr<transport::Connector>> connectors;
  std::vector<std::unique_ptr<transport::Endpoint>> endpoints;
  std::vector<Link> links;
};

std::string hostName() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string isoDateUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json capsJson(const transport::Caps& c) {
  return json{{"rma_write", c.rmaWrite},          {"rma_read", c.rmaRead},
              {"rma_emulated", c.rmaEmulated},    {"max_message_bytes", c.maxMessageBytes},
              {"max_send_queue", c.maxSendQueue}, {"max_recv_queue", c.maxRecvQueue},
              {"inline_bytes", c.inlineBytes}};
}

// libfabric variables that change what goes on the wire (rxm/rxd eager, SAR and rendezvous
// protocols, shm's), so both sides must agree: the client sends its own with the test
// description and the server's session adopts them. Local-only ones (interfaces, logging,
// provider paths) stay each side's own.
constexpr const char* kWireEnvPrefixes[] = {"FI_OFI_RXM_", "FI_OFI_RXD_", "FI_SHM_"};
constexpr size_t kMaxWireEnv = 64;

bool isWireEnvName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  for (const char* p : kWireEnvPrefixes)
    if (name.rfind(p, 0) == 0 && name.size() > std::strlen(p)) return true;
  return false;
}

// This process's wire-relevant libfabric variables, name -> value.
json wireEnv() {
  json out = json::object();
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || !isWireEnvName(kv.substr(0, eq))) continue;
    out[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1, 256));
  }
  return out;
}

// Server session (a child of the daemon): replaces its wire-relevant variables by the client's
// (`requested`, untrusted) before libfabric reads them. Returns the server's own settings.
json adoptWireEnv(const json* requested, const std::string& peer) {
  json own = wireEnv();
  const std::string what = fmt::format("provider_env from {}", peer);
  if (requested && requested->size() > kMaxWireEnv)
    throw ProtocolError(
        fmt::format("{}: {} variables, limit {}", what, requested->size(), kMaxWireEnv));
  if (requested)
    for (const auto& [name, value] : requested->items())
      if (!isWireEnvName(name))
        throw ProtocolError(fmt::format("{}: \"{}\" is not a libfabric protocol variable ({}*)",
                                        what, escapeForLog(name, 64),
                                        "FI_OFI_RXM_, FI_OFI_RXD_, FI_SHM_"));
  for (const auto& [name, value] : own.items())
    unsetenv(name.c_str());
  if (requested)
    for (const auto& [name, value] : requested->items()) {
      std::string v = jsonString(*requested, name, what, {}, 256);
      for (unsigned char c : v)
        if (c < 0x20 || c == 0x7f)
          throw ProtocolError(fmt::format("{}: {} holds a control character", what, name));
      setenv(name.c_str(), v.c_str(), 1);
    }
  return own;
}

std::string describeEnv(const json& env) {
  std::string out;
  for (const auto& [name, value] : env.items())
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", escapeForLog(name, 64),
                       value.is_string() ? escapeForLog(value.get_ref<const std::string&>(), 64)
                                         : std::string("?"));
  return out.empty() ? "libfabric defaults" : out;
}

// Checks the test against what this side's device can do; `who` is "local" or "server".
void checkCaps(const TestSpec& spec, const transport::Device& device, const char* who) {
  transport::Caps caps = device.caps();
  for (uint64_t b : spec.sizes)
    if (caps.maxMessageBytes && b > caps.maxMessageBytes)
      throw UsageError(fmt::format("--size {}: above the {} {} device {} limit of {} bytes", b, who,
                                   device.backend(), device.name(), caps.maxMessageBytes));
  if (spec.op == "write" && !caps.rmaWrite)
    throw UsageError(fmt::format("--op write: the {} transport on {} does not support RDMA write",
                                 device.backend(), device.name()));
  if (spec.op == "read" && !caps.rmaRead)
    throw UsageError(fmt::format("--op read: the {} transport on {} does not support RDMA read",
                                 device.backend(), device.name()));
}

void openSide(Side& s, const TestSpec& spec, const transport::DeviceOptions& opts,
              const char* who) {
  s.device = transport::openDevice(spec.transport, opts);
  checkCaps(spec, *s.device, who);
  s.layout = BufferLayout::forMaxMessage(spec.maxSize());
  for (uint32_t q = 0; q < spec.queuePairs; ++q) {
    s.buffers.emplace_back(s.layout.total());
    s.regions.push_back(s.device->registerMemory(s.buffers.back().data(), s.layout.total()));
    s.connectors.push_back(s.device->createConnector());
  }
}

json addressesJson(const Side& s) {
  json conns = json::array(), regions = json::array();
  for (const auto& c : s.connectors)
    conns.push_back(rendezvous::toHex(c->localAddress()));
  for (const auto& r : s.regions)
    regions.push_back(rendezvous::toHex(r->exportRegion().encode()));
  return json{{"connectors", conns}, {"regions", regions}};
}

void connectSide(Side& s, const json& remote, const Deadline& deadline, const std::string& peer) {
  // By reference through the bounded readers: never a copy of the peer's DOM.
  const std::string what = fmt::format("connection addresses from {}", peer);
  const json* conns = jsonArray(remote, "connectors", what, kMaxQueuePairs);
  const json* regions = jsonArray(remote, "regions", what, kMaxQueuePairs);
  size_t nc = conns ? conns->size() : 0, nr = regions ? regions->size() : 0;
  if (nc != s.connectors.size() || nr != s.connectors.size())
    throw ProtocolError(
        fmt::format("peer {} sent {} connection addresses and {} regions, expected {}", peer, nc,
                    nr, s.connectors.size()));
  auto hexItem = [&](const json& v, const char* field) -> const std::string& {
    if (!v.is_string())
      throw ProtocolError(
          fmt::format("{}: field \"{}\" holds a {}, not a hex string", what, field, v.type_name()));
    return v.get_ref<const std::string&>();
  };
  for (size_t i = 0; i < s.connectors.size(); ++i) {
    auto addr =
        rendezvous::fromHex(hexItem((*conns)[i], "connectors"), transport::kMaxAddressBytes);
    auto region = transport::RemoteRegion::decode(
        rendezvous::fromHex(hexItem((*regions)[i], "regions"), 17 + transport::kMaxKeyBytes));
    if (region.length < s.layout.total())
      throw ProtocolError(fmt::format("peer {} exported a {}-byte buffer, expected {}", peer,
                                      region.length, s.layout.total()));
    s.endpoints.push_back(s.connectors[i]->connect(addr, deadline));
    s.links.push_back(Link{s.endpoints.back().get(), s.regions[i].get(), region, s.layout});
  }
}

void zeroReceiveAreas(Side& s) {
  for (auto& link : s.links)
    std::memset(link.region->data() + link.layout.recvOffset(), 0, link.layout.area + kCtrlBytes);
}

// lat --op read --check: the data the initiator reads, in place before the size starts.
void stampReadSource(Side& s, const TestSpec& spec, uint64_t bytes) {
  if (!spec.check || spec.op != "read") return;
  for (auto& link : s.links)
    stampPattern(link.region->data() + link.layout.sendOffset(), bytes, readPatternTag(bytes));
}

// Watchdog for engine loops: an Error frame from the peer aborts the run with its message; EOF
// means the peer died (ProtocolError from peekType).

std::function<void()> controlWatchdog(Channel& ch) {
  // Peeks, so a frame that legitimately arrives early (the server's SizeResult while this side
  // still drains its last completions) stays queued for the code that expects it.
  return [&ch]() {
    int type = ch.peekType();
    if (type != rendezvous::kError) return;
    Frame f = ch.receive(Deadline(2000), "the peer's error message");
    rendezvous::throwPeerReport("peer " + ch.peerName(), f.text());
  };
}

// The peer as the engines name it in timeouts and completion errors: its control address and
// the data-path address of its first connection (verbs "QPN 0x12 @ GID", libfabric
// "fi_sockaddr_in://host:port", socket "host:port"), so a black-holed data path is named, not
// only the control port that still answers. "+N more" when there are several connections.
std::string progressPeer(const Channel& ch, const Side& side) {
  std::string data;
  if (!side.endpoints.empty()) {
    json p = side.endpoints.front()->properties();
    for (const char* key : {"peer", "peer_address"}) {
      auto it = p.find(key);
      if (it != p.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
        data = it->get<std::string>();
        break;
      }
    }
  }
  if (data.empty() || data == ch.peerName()) return ch.peerName();
  if (side.endpoints.size() > 1) data += fmt::format(" +{} more", side.endpoints.size() - 1);
  return fmt::format("{} (data path {})", ch.peerName(), data);
}

struct SizeRun {
  uint64_t bytes = 0, iterations = 0, warmup = 0;
};

// Runs one size on one side. Returns this side's measurement as JSON (the server sends it to the
// client) and fills `pp` / `bw` for the client.
json runSize(const TestSpec& spec, Side& side, Progress& progress, const SizeRun& run,
             bool initiator, PingPongResult* ppOut, BandwidthResult* bwOut) {
  progress.setPhase(fmt::format("size {}", run.bytes));
  if (spec.test == "lat") {
    PingPongParams p;
    p.op = spec.op == "tagged" ? "send" : spec.op;  // RDM sends are tagged
    p.bytes = run.bytes;
    p.iterations = run.iterations;
    p.warmup = run.warmup;
    p.initiator = initiator;
    p.check = spec.check;
    PingPongResult r = runPingPong(*side.device, side.links[0], progress, p);
    json j{{"seconds", r.seconds}, {"check_errors", r.checkErrors}, {"wrong", r.checkErrors}};
    if (ppOut) *ppOut = std::move(r);
    return j;
  }
  BandwidthParams p;
  p.op = parseBwOp(spec.op);  // RDM sends are tagged
  p.mode = parseBwMode(spec.mode);
  p.bytes = run.bytes;
  p.iterations = run.iterations;
  p.warmup = run.warmup;
  p.window = p.mode == BwMode::kStream ? spec.streamDepth() : spec.window;
  p.cqModeration = spec.cqModeration;
  p.sender = initiator;
  p.bidirectional = spec.bidirectional;
  p.check = spec.check;
  BandwidthResult r = runBandwidth(*side.device, side.links, progress, p);
  if (bwOut) *bwOut = r;
  return json{{"seconds", r.seconds},
              {"mb_per_s", r.megabytesPerSec},
              {"msg_per_s", r.messagesPerSec},
              {"messages", r.messages},
              {"target", r.target},
              {"checked", r.checked},
              {"wrong", r.wrong}};
}

// ---------------------------------------------------------------------------------------------
// Server

// Sends a one-line kError to the peer once per channel (best effort, 1 s).
void tellPeer(Channel& ch, const std::string& message) {
  if (ch.fd() < 0) return;
  try {
    ch.send(rendezvous::kError, std::string_view(message), Deadline(1000));
  } catch (const std::exception&) {
  }
  ch.close();
}

void serveWithSide(Channel& ch, const TestSpec& spec, const transport::DeviceOptions& opts,
                   Side& side, const json& ownEnv);

void serveSessionImpl(Channel& ch, const ServerOptions& so, uint64_t session,
                      const detail::AdmitFn& admit) {
  rendezvous::serverHandshake(ch, Deadline(so.helloTimeoutMs), so.token);
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
  if (so.verbose)
    std::cerr << fmt::format("rdmabench server: session {}: {} {} {} from {}\n", session, spec.test,
                             escapeForLog(spec.transport, 64), spec.op, ch.peerName());
  transport::DeviceOptions opts = spec.serverDevice;
  // The target of a one-sided verbs bw (write/read, one direction) has nothing to do until the
  // initiator's closing control message: the HCA places the data. It sleeps on completion events,
  // like perftest's ib_write_bw / ib_read_bw server (blocked in a socket read), instead of busy
  // polling a core that a loopback initiator needs (rxe in the 4-vCPU TCG VM, write 64 KiB
  // stream: 34-38 MB/s with a spinning target, 46-50 with a sleeping one, ib_write_bw 48-52).
  // Socket and ofi targets progress the emulated writes themselves and keep the client's mode.
  if (spec.test == "bw" && spec.transport == "verbs" && !spec.bidirectional &&
      (spec.op == "write" || spec.op == "read"))
    opts.useEvent = true;
  opts.localHost = ch.localAddress();
  opts.peerHost = ch.peerAddress();
  // This process is the session's own child (server.cc), so the environment is ours to change.
  json ownEnv = adoptWireEnv(jsonObject(req, "provider_env", "test description"), ch.peerName());
  Side side;  // outlives the handler below: the client hears why before the data path closes
  try {
    serveWithSide(ch, spec, opts, side, ownEnv);
  } catch (const InterruptedError&) {
    tellPeer(ch, fmt::format("server interrupted ({})", interruptName()));
    throw;
  } catch (const std::exception& e) {
    tellPeer(ch, rendezvous::errorFrameText(e));
    throw;
  }
}

void serveWithSide(Channel& ch, const TestSpec& spec, const transport::DeviceOptions& opts,
                   Side& side, const json& ownEnv) {
  auto dl = [&] { return Deadline(spec.timeoutMs); };
  openSide(side, spec, opts, "server");
  ch.sendJson(rendezvous::kTestAccept,
              json{{"host", hostName()},
                   {"version", RDMABENCH_VERSION},
                   {"device", side.device->properties()},
                   {"caps", capsJson(side.device->caps())},
                   {"provider_env_own", ownEnv}},
              dl());
  ch.sendJson(rendezvous::kAddresses, addressesJson(side), dl());
  json remote = expectJson(ch, rendezvous::kAddresses, Deadline(spec.timeoutMs),
                           "client connection addresses");
  connectSide(side, remote, Deadline(spec.timeoutMs), ch.peerName());
  Progress progress(*side.device, spec.timeoutMs, controlWatchdog(ch), progressPeer(ch, side),
                    opts.useEvent);
  for (;;) {
    Frame f = ch.receive(Deadline(spec.timeoutMs), "the next size or the end of the test");
    if (f.type == rendezvous::kDone) return;
    if (f.type == rendezvous::kError)
      rendezvous::throwPeerReport("client " + ch.peerName(), f.text());
    if (f.type != rendezvous::kSizeStart)
      throw ProtocolError(
          fmt::format("client {} sent unexpected message type {}", ch.peerName(), f.type));
    const std::string what = fmt::format("size start from {}", ch.peerName());
    json j = rendezvous::parseFrameJson(f, what);
    SizeRun run{jsonUint(j, "bytes", what, 0),
                jsonUint(j, "iterations", what, 0, 1, kMaxIterations),
                jsonUint(j, "warmup", what, 0, 0, kMaxIterations)};
    if (std::find(spec.sizes.begin(), spec.sizes.end(), run.bytes) == spec.sizes.end())
      throw ProtocolError(
          fmt::format("client asked for size {} / {} iterations outside the test "
                      "description",
                      run.bytes, run.iterations));
    zeroReceiveAreas(side);
    stampReadSource(side, spec, run.bytes);
    ch.sendJson(rendezvous::kSizeReady, json::object(), dl());
    detail::testCrashHook(run.bytes);
    json result = runSize(spec, side, progress, run, false, nullptr, nullptr);
    ch.sendJson(rendezvous::kSizeResult, result, Deadline(spec.timeoutMs));
  }
}

// ---------------------------------------------------------------------------------------------
// Client

// Forked loopback server; killed and reaped on every exit path.
class LoopbackServer {
 public:
  explicit LoopbackServer(uint16_t& port) {
    rendezvous::Listener listener("127.0.0.1", 0);
    port = listener.port();
    std::cout.flush();
    std::cerr.flush();
    pid_ = fork();
    if (pid_ < 0) throw SystemError("fork (loopback server)", errno);
    if (pid_ == 0) {
      int rc = 0;
      try {
        ServerOptions so;
        so.once = true;
        so.verbose = false;
        so.maxTimeoutMs = kMaxTimeoutMs;  // the client's own --timeout applies as given
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
    const TestSpec& spec = o_.spec;
    spec.validate();
    uint16_t port = o_.port;
    std::unique_ptr<LoopbackServer> loopback;
    std::string host = o_.host;
    if (host.empty()) {
      host = "127.0.0.1";
      loopback = std::make_unique<LoopbackServer>(port);
    }
    Channel ch = Channel::connect(host, port, Deadline(o_.connectTimeoutMs), loopback != nullptr);
    try {
      session(ch);
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
    rendezvous::clientHandshake(ch, Deadline(spec.timeoutMs), o_.token);
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

  // Waits up to 1 s for an Error frame from the server; throws PeerError carrying it and the
  // local error when one arrives.
  static void serverFate(Channel& ch, const std::exception& local) {
    if (ch.fd() < 0) return;
    try {
      Deadline dl(1000);
      while (!dl.expired()) {
        if (ch.peekType() == rendezvous::kError) {
          Frame f = ch.receive(Deadline(1000), "the server's error message");
          throw PeerError(fmt::format("server {} reported: {} (here: {})", ch.peerName(),
                                      escapeForLog(f.text(), 400), local.what()));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    } catch (const PeerError&) {
      throw;
    } catch (const std::exception&) {
      // EOF or another frame: nothing more to learn.
    }
  }

  void sessionWithSide(Channel& ch, Side& side, const transport::DeviceOptions& opts) {
    const TestSpec& spec = o_.spec;
    auto dl = [&] { return Deadline(spec.timeoutMs); };
    openSide(side, spec, opts, "local");
    json accept = expectJson(ch, rendezvous::kTestAccept, Deadline(spec.timeoutMs),
                             "the server to open its device");
    ch.sendJson(rendezvous::kAddresses, addressesJson(side), dl());
    json remote = expectJson(ch, rendezvous::kAddresses, Deadline(spec.timeoutMs),
                             "server connection addresses");
    connectSide(side, remote, Deadline(spec.timeoutMs), ch.peerName());

    report::RunInfo info;
    info.test = spec.test;
    info.transport = spec.transport;
    info.op = spec.op;
    info.bidirectional = spec.bidirectional;
    info.roundTrip = spec.op == "read";
    const bool stream = spec.test == "bw" && spec.mode == "stream";
    info.window = spec.test == "bw" ? (stream ? spec.streamDepth() : spec.window) : 0;
    info.localHost = hostName();
    const std::string what = fmt::format("test accept from {}", ch.peerName());
    info.remoteHost = escapeForLog(jsonString(accept, "host", what, {}, 256), 256);
    info.local = side.device->properties();
    info.local["connection"] = side.endpoints[0]->properties();
    info.local["caps"] = capsJson(side.device->caps());
    info.clock = measureClockFacts().toJson();
    if (o_.placeThread) info.placement = o_.placeThread(side.device->name());
    if (const json* dev = jsonObject(accept, "device", what)) info.remote = *dev;  // depth-bounded
    if (!info.remote.is_object()) info.remote = json::object();
    if (const json* caps = jsonObject(accept, "caps", what)) info.remote["caps"] = *caps;
    info.commandLine = o_.commandLine;
    info.date = isoDateUtc();
    info.toolVersion = RDMABENCH_VERSION;
    info.extra = json{{"server", ch.peerName()},
                      {"server_version", escapeForLog(jsonString(accept, "version", what), 64)},
                      {"queue_pairs", spec.queuePairs},
                      {"cq_moderation", spec.cqModeration},
                      {"timeout_s", static_cast<double>(spec.timeoutMs) / 1000},
                      {"iterations", spec.iterations ? json(spec.iterations) : json("auto")},
                      {"duration_s", spec.durationSec},
                      {"check", spec.check}};
    if (spec.test == "bw") {
      info.extra["mode"] = spec.mode;
      // Which figure leads: the side that owns the timed interval (docs/metrics.md).
      info.extra["headline"] =
          spec.bidirectional
              ? "client: both directions, first post to delivery of both (osu_bibw)"
              : (spec.op == "read" ? "client (reader): first post to last read completion"
                                   : "client (sender): first post to delivery at the target; "
                                     "peer_BW = the target's own interval");
    }
    if (!o_.transportNote.empty()) info.extra["transport_note"] = o_.transportNote;
    if (spec.transport == "ofi") {
      // Both sides' wire-relevant libfabric settings: the server ran with the client's.
      json clientEnv = wireEnv();
      std::string server = "server used the client's";
      if (const json* own = jsonObject(accept, "provider_env_own", what);
          own && own->size() <= kMaxWireEnv && *own != clientEnv)
        server += fmt::format(" (its own: {})", describeEnv(*own));
      info.extra["provider_env"] = fmt::format("client {}; {}", describeEnv(clientEnv), server);
    }
    reporter_.begin(info);
    begun_ = true;

    Progress progress(*side.device, spec.timeoutMs, controlWatchdog(ch), progressPeer(ch, side),
                      opts.useEvent);
    uint64_t largestPassed = 0;  // largest size that completed (for the path-MTU hint)
    for (size_t index = 0; index < spec.sizes.size(); ++index) {
      const uint64_t bytes = spec.sizes[index];
      if (o_.onSizeStart) o_.onSizeStart(index, spec.sizes.size(), bytes);
      SizeRun run{bytes, spec.iterationsFor(bytes), spec.warmupFor(bytes)};
      if (spec.durationSec > 0) {
        // Calibrate: the warmup count (at least 10) timed as a run of its own.
        SizeRun cal{bytes, std::max<uint64_t>(run.warmup, 10), 0};
        PingPongResult pp;
        BandwidthResult bw;
        runOneSize(ch, side, progress, cal, &pp, &bw);
        double per = spec.test == "lat" ? pp.seconds / static_cast<double>(cal.iterations)
                                        : bw.seconds / static_cast<double>(cal.iterations);
        double n = per > 0 ? spec.durationSec / per : static_cast<double>(kMaxIterations);
        run.iterations =
            static_cast<uint64_t>(std::clamp(n, 1.0, static_cast<double>(kMaxIterations)));
        run.warmup = 0;
      }
      PingPongResult pp;
      BandwidthResult bw;
      json serverResult;
      try {
        serverResult = runOneSize(ch, side, progress, run, &pp, &bw);
      } catch (const TransportError& e) {
        // Smaller sizes passed and this one exceeded the retry count: name the path MTU.
        if (spec.transport != "verbs" || largestPassed == 0 || side.links.empty()) throw;
        const uint64_t mtu = side.links[0].endpoint->properties().value("mtu", uint64_t{0});
        std::string hint = pathMtuHint(largestPassed, bytes, mtu, e.what());
        if (hint.empty()) throw;
        throw TransportError(e.what() + hint);
      }
      report::Row row;
      row.bytes = bytes;
      row.iterations = run.iterations;
      row.warmup = run.warmup;
      // The server's figures arrive from the wire: read range-checked (never trusted).
      const uint64_t peerWrong = jsonUint(serverResult, "wrong", "the server's size result", 0);
      if (spec.test == "lat") {
        row.latency = pp.samples.summarize();
        row.seconds = pp.seconds;
        row.messages = run.iterations;
        if (spec.check) row.wrong = pp.checkErrors + peerWrong;
      } else {
        row.seconds = bw.seconds;
        row.megabytesPerSec = bw.megabytesPerSec;
        row.messagesPerSec = bw.messagesPerSec;
        row.messages = bw.messages / spec.queuePairs;
        double peer = jsonDouble(serverResult, "mb_per_s", "the server's size result", 0.0, 0.0);
        if (peer > 0) row.peerMegabytesPerSec = peer;
        if (spec.check) row.wrong = bw.wrong + peerWrong;
      }
      if (row.wrong) wrongTotal_ += *row.wrong;
      reporter_.row(row);
      largestPassed = std::max(largestPassed, bytes);
    }
    ch.send(rendezvous::kDone, std::string_view(), dl());
    reporter_.end();
  }

  json runOneSize(Channel& ch, Side& side, Progress& progress, const SizeRun& run,
                  PingPongResult* pp, BandwidthResult* bw) {
    const TestSpec& spec = o_.spec;
    zeroReceiveAreas(side);
    ch.sendJson(rendezvous::kSizeStart,
                json{{"bytes", run.bytes}, {"iterations", run.iterations}, {"warmup", run.warmup}},
                Deadline(spec.timeoutMs));
    expectJson(ch, rendezvous::kSizeReady, Deadline(spec.timeoutMs),
               fmt::format("the server to get ready for size {}", run.bytes));
    runSize(spec, side, progress, run, true, pp, bw);
    return expectJson(ch, rendezvous::kSizeResult, Deadline(spec.timeoutMs),
                      fmt::format("the server's result for size {}", run.bytes));
  }

  const ClientOptions& o_;
  report::Reporter& reporter_;
  bool begun_ = false;
  uint64_t wrongTotal_ = 0;  // --check: wrong messages over all sizes, both sides
};

}  // namespace

void runClient(const ClientOptions& options, report::Reporter& reporter) {
  Client(options, reporter).run();
}

namespace detail {

void serveSession(Channel& ch, const ServerOptions& so, uint64_t session, const AdmitFn& admit) {
  serveSessionImpl(ch, so, session, admit);
}

void tellPeer(Channel& ch, const std::string& message) {
  engine::tellPeer(ch, message);
}

void testCrashHook(uint64_t bytes) {
  const char* at = std::getenv("RDMABENCH_TEST_SESSION_CRASH_AT");
  if (at && *at && std::to_string(bytes) == at) raise(SIGSEGV);
}

}  // namespace detail

}  // namespace rdmabench::engine
