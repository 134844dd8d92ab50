// A pair's measurements on the point-to-point engines (pairs_loops.h).
#include "collective/pairs_loops.h"

#include <cstring>

#include <fmt/format.h>

#include "common/error.h"

namespace rdmabench::collective::detail {
namespace {

// The link to `peer` for messages of `bytes`, after the pair's handshake.
engine::Link meetOnLink(Communicator& c, int peer, uint64_t bytes, const char* step,
                        const char* option) {
  checkPairSize(c, bytes, option);
  const engine::BufferLayout layout = pairLayout(bytes);
  engine::Link link = c.link(peer, layout);
  // Zeroed before the handshake: the peer's first write may land right after it (write
  // ping-pong spins on the receive area's last byte).
  std::memset(link.region->data() + layout.recvOffset(), 0, layout.area + engine::kCtrlBytes);
  c.pairSync(peer, engine::Step{step, peer});
  return link;
}

// Runs `fn` (an engine call); its errors become the root cause when the store knows a rank died.
template <class Fn>
auto engineCall(Communicator& c, Fn&& fn) {
  try {
    return fn();
  } catch (const InterruptedError&) {
    throw;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    c.rethrowWithCause(e);
  }
}

}  // namespace

void checkPairSize(Communicator& c, uint64_t bytes, const char* option) {
  const uint64_t most = c.device().caps().maxMessageBytes;
  if (most > 0 && bytes > most)
    throw UsageError(fmt::format("{} {}: above the transport's largest message of {} bytes", option,
                                 bytes, most));
}

engine::PingPongResult pairLatency(Communicator& c, int peer, bool initiator,
                                   const PairLatency& t) {
  engine::Link link = meetOnLink(c, peer, t.run.bytes, t.step, "--lat-size");
  engine::PingPongParams p = t.run;
  p.initiator = initiator;
  c.setWarmup(p.warmup > 0);
  return engineCall(c, [&] { return engine::runPingPong(c.device(), link, c.progress(), p); });
}

engine::BandwidthResult pairBandwidth(Communicator& c, int peer, bool sender,
                                      const PairBandwidth& t) {
  std::vector<engine::Link> links{meetOnLink(c, peer, t.run.bytes, t.step, "--bw-size")};
  engine::BandwidthParams p = t.run;
  p.sender = sender;
  c.setWarmup(p.warmup > 0);
  return engineCall(c, [&] { return engine::runBandwidth(c.device(), links, c.progress(), p); });
}

}  // namespace rdmabench::collective::detail
