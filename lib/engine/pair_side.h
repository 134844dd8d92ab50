#pragma once
// Internals shared by the two halves of the point-to-point session (pair.cc: the client and its
// loopback server; pair_server.cc: the server's session): what one side holds, opening and
// connecting it, the wire environment, and running one size. Not a public API: used only by
// lib/engine. Thread-safety: one Side per session thread/process.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/host_info.h"
#include "engine/bandwidth.h"
#include "engine/buffers.h"
#include "engine/control_decode.h"
#include "engine/link.h"
#include "engine/pingpong.h"
#include "engine/progress.h"
#include "engine/spec.h"
#include "rendezvous/channel.h"
#include "transport/transport.h"

namespace rdmabench::engine::pairing {

// bw: whether the peer's interval (seconds; a target from its start marker to its fin, a
// receiver from its first to its last receive) is a measurement next to the sender's. It is
// only as good as the peer's polling: a peer that did not run while the data arrived
// (descheduled on a loaded host; with libfabric's manual progress nothing arrives until it
// polls) reaps its first and last marks at once, and its figure exceeds what was sent (seen:
// 25,600,000 MB/s for 421 MB/s sent, tcp;ofi_rxm). The same messages cannot arrive in much less
// time than they took to send: false when the peer's interval is under half of the sender's and
// shorter by more than 50 us (a one-way latency and a completion). Pure.
bool peerIntervalUsable(double senderSeconds, double peerSeconds);

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

// The client's wire-relevant FI_* settings (sent with the test description).
nlohmann::json wireEnv();
// Applies the client's wire settings in the server's session (its own process); returns what
// the session used. Throws ProtocolError for names outside the allowed set.
nlohmann::json adoptWireEnv(const nlohmann::json* requested, const std::string& peer);
// One header line for a wire environment.
std::string describeEnv(const nlohmann::json& env);
// Opens the device, checks the test against its caps (UsageError naming `who`), registers one
// buffer and creates one connector per connection: openSideDevice, then allocateSide.
void openSide(Side& s, const TestSpec& spec, const transport::DeviceOptions& opts, const char* who);
// Opens the device and checks the test against its caps (UsageError naming `who`; the device's
// own option errors, e.g. --ib-port out of range, as openDevice throws them). Allocates no buffer.
void openSideDevice(Side& s, const TestSpec& spec, const transport::DeviceOptions& opts,
                    const char* who);
// Allocates and registers one buffer for the largest size and creates one connector per
// connection on the device openSideDevice opened. TransportError when registration fails.
void allocateSide(Side& s, const TestSpec& spec);
// This side's connection addresses and regions, hex, for the Addresses frame.
nlohmann::json addressesJson(const Side& s);
// Connects every connection to the peer's addresses (ProtocolError on a malformed frame).
void connectSide(Side& s, const nlohmann::json& remote, const Deadline& deadline,
                 const std::string& peer);
void zeroReceiveAreas(Side& s);
// lat --op read --check: the data the initiator reads, in place before the size starts.
void stampReadSource(Side& s, const TestSpec& spec, uint64_t bytes);
// Watchdog for engine loops: an Error frame from the peer aborts the run with its message.
std::function<void()> controlWatchdog(rendezvous::Channel& ch);
// The peer as errors name it: control address and the data-path address of its first connection.
std::string progressPeer(const rendezvous::Channel& ch, const Side& side);
// Runs one size on one side and returns this side's measurement; lat appends its samples to
// `samples` (may be null: the server keeps none). `ready` (may be empty) is called once this
// side's first receives are posted (PingPongParams::ready).
SizeResult runSize(const TestSpec& spec, Side& side, Progress& progress, const SizeRun& run,
                   bool initiator, stats::SampleSet* samples,
                   const std::function<void()>& ready = {});
// Sends a one-line kError to the peer once per channel (best effort, 1 s).
void tellPeer(rendezvous::Channel& ch, const std::string& message);

}  // namespace rdmabench::engine::pairing
