// Shared halves of the point-to-point session (pair_side.h): sides, wire environment, sizes.
#include "engine/pair_side.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <iostream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/units.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/hints.h"
#include "engine/link.h"
#include "engine/pattern.h"
#include "engine/pingpong.h"
#include "engine/progress.h"
#include "engine/spec_params.h"
#include "rendezvous/channel.h"
#include "rendezvous/protocol.h"

extern char** environ;

namespace rdmabench::engine::pairing {

using nlohmann::json;
using rendezvous::Channel;
using rendezvous::expectJson;
using rendezvous::Frame;

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
  // Everything checked before the environment changes (control_decode.h).
  checkWireEnv(requested, fmt::format("provider_env from {}", peer));
  json own = wireEnv();
  for (const auto& [name, value] : own.items())
    unsetenv(name.c_str());
  if (requested)
    for (const auto& [name, value] : requested->items())
      setenv(name.c_str(), value.is_string() ? value.get_ref<const std::string&>().c_str() : "",
             1);  // null: empty, as checkWireEnv reads it
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
static void checkCaps(const TestSpec& spec, const transport::Device& device, const char* who) {
  transport::Caps caps = device.caps();
  for (uint64_t b : spec.sizes)
    if (caps.maxMessageBytes && b > caps.maxMessageBytes)
      throw UsageError(fmt::format("--size {}: above the {} {} device {} limit of {} bytes", b, who,
                                   device.backend(), device.name(), caps.maxMessageBytes));
  checkOpCaps(spec.op, device);
}

// Window-mode send with several connections on a device whose operation slots are shared
// (ofi): every connection's receiver preposts min(2 x window, rx depth - 2) data receives and two
// control receives (engine/bandwidth.cc), in an order the messages match. When they do not all
// fit, a connection's control receive gets posted before its last data receives and the run
// stalls until --timeout (bw -t ofi -q 16 -w 70: 16 x 142 = 2272 above 2112 slots).
static void checkSharedSlots(const TestSpec& spec, const transport::Device& device,
                             const char* who) {
  const transport::Caps caps = device.caps();
  if (!caps.sharedOpSlots || !spec.bandwidth() || spec.stream() || spec.op != Op::kSend) return;
  const uint64_t rq = caps.maxRecvQueue ? caps.maxRecvQueue : 512;
  const uint64_t perLink = std::min<uint64_t>(2ull * spec.window, rq - 2) + 2;
  const uint64_t need = perLink * spec.queuePairs;
  if (need <= caps.sharedOpSlots) return;
  const uint64_t perQp = caps.sharedOpSlots / spec.queuePairs;
  const std::string lowerWindow =
      perQp >= 4 ? fmt::format("--window to {} or ", (perQp - 2) / 2) : std::string();
  throw UsageError(fmt::format(
      "--qp {} x --window {}: {} receives posted at once (each connection {} = min(2 x window, "
      "rx depth - 2) + 2), above the {} operation slots the {} {} device {} shares among its "
      "connections (lower {}--qp to {})",
      spec.queuePairs, spec.window, need, perLink, caps.sharedOpSlots, who, device.backend(),
      device.name(), lowerWindow, std::max<uint64_t>(1, caps.sharedOpSlots / perLink)));
}

// Window-mode send: the receiving side posts the whole window and a control receive at once
// (engine/bandwidth.cc refuses the same at its first size, after connecting). Checked here, at
// device open, so the error comes before any connection: the server receives, and the client
// too when bidirectional.
static void checkReceiveWindow(const TestSpec& spec, const transport::Device& device,
                               const char* who) {
  const bool receives = spec.bidirectional || std::string_view(who) != "local";
  if (!spec.bandwidth() || spec.stream() || dataOp(spec.op) != DataOp::kSend || !receives) return;
  const transport::Caps caps = device.caps();
  const uint32_t rq = caps.maxRecvQueue ? caps.maxRecvQueue : 512;
  if (spec.window + 1 <= rq) return;
  throw UsageError(fmt::format(
      "--window {}: needs {} posted receives (the window and a control message), above the "
      "receive queue depth {} of the {} {} device {} (raise --rx-depth or lower --window to {})",
      spec.window, spec.window + 1, rq, who, device.backend(), device.name(), rq - 1));
}

void openSideDevice(Side& s, const TestSpec& spec, const transport::DeviceOptions& opts,
                    const char* who) {
  s.device = transport::openDevice(spec.transport, opts);
  checkCaps(spec, *s.device, who);
  checkSharedSlots(spec, *s.device, who);
  checkReceiveWindow(spec, *s.device, who);
}

void openSide(Side& s, const TestSpec& spec, const transport::DeviceOptions& opts,
              const char* who) {
  openSideDevice(s, spec, opts, who);
  allocateSide(s, spec);
}

void allocateSide(Side& s, const TestSpec& spec) {
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
  std::vector<PeerConnection> conns =
      decodeAddresses(remote, s.connectors.size(), s.layout.total(), peer);
  for (size_t i = 0; i < conns.size(); ++i) {
    s.endpoints.push_back(s.connectors[i]->connect(conns[i].address, deadline));
    s.links.push_back(
        Link{s.endpoints.back().get(), s.regions[i].get(), conns[i].region, s.layout});
  }
}

void zeroReceiveAreas(Side& s) {
  for (auto& link : s.links)
    std::memset(link.region->data() + link.layout.recvOffset(), 0, link.layout.area + kCtrlBytes);
}

// lat --op read --check: the data the initiator reads, in place before the size starts.
void stampReadSource(Side& s, const TestSpec& spec, uint64_t bytes) {
  if (!spec.check || spec.op != Op::kRead) return;
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
  if (!side.endpoints.empty()) data = side.endpoints.front()->info().peer.value_or("");
  if (data.empty() || data == ch.peerName()) return ch.peerName();
  if (side.endpoints.size() > 1) data += fmt::format(" +{} more", side.endpoints.size() - 1);
  return fmt::format("{} (data path {})", ch.peerName(), data);
}

// Runs one size on one side (pair_side.h).
SizeResult runSize(const TestSpec& spec, Side& side, Progress& progress, const SizeRun& run,
                   bool initiator, stats::SampleSet* samples, const std::function<void()>& ready) {
  progress.setStage(fmt::format("size {}", run.bytes));
  progress.setWarmup(run.warmup > 0);
  SizeResult out;
  if (spec.latency()) {
    PingPongParams p = pingPongParams(spec, run.bytes, run.iterations, run.warmup, initiator);
    p.ready = ready;
    p.samplesInto = samples;  // appended: -D runs a size in chunks
    PingPongResult r = runPingPong(*side.device, side.links[0], progress, p);
    out.seconds = r.seconds;
    out.wrong = r.checkErrors;
    out.desched = r.desched;  // this chunk's; the client sums the chunks of a size
    return out;
  }
  BandwidthParams p = bandwidthParams(spec, run.bytes, run.iterations, run.warmup, initiator);
  p.ready = ready;
  BandwidthResult r = runBandwidth(*side.device, side.links, progress, p);
  out.seconds = r.seconds;
  out.wrong = r.wrong;
  out.megabytesPerSec = r.megabytesPerSec;
  out.messagesPerSec = r.messagesPerSec;
  out.messages = r.messages;
  out.target = r.target;
  out.checked = r.checked;
  out.desched = r.desched;
  out.stall = r.stall;
  return out;
}

// Sends a one-line kError to the peer once per channel (best effort, 1 s).
void tellPeer(Channel& ch, const std::string& message) {
  if (ch.fd() < 0) return;
  try {
    ch.send(rendezvous::kError, std::string_view(message), Deadline(1000));
  } catch (const std::exception&) {
  }
  ch.close();
}

bool peerIntervalUsable(double senderSeconds, double peerSeconds) {
  return !(peerSeconds * 2 < senderSeconds && senderSeconds - peerSeconds > 50e-6);
}

}  // namespace rdmabench::engine::pairing
