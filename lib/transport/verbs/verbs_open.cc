// openDevice() of the verbs backend: device and port choice, GID choice, queue depths, path
// MTU, PD / completion channel / CQ, and the inline size probe. See docs/transport-verbs.md.

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "common/error.h"
#include "transport/backends.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {

namespace {

constexpr uint32_t kDefaultTxDepth = 128;
constexpr uint32_t kDefaultRxDepth = 512;
// Latency-friendly inline default (perftest's write_lat default, shared/research/perftest.md).
constexpr uint32_t kDefaultInline = 220;

// ---- openDevice ---------------------------------------------------------------------------

struct DeviceList {
  ibv_device** list = nullptr;
  int count = 0;
  DeviceList() {
    errno = 0;
    list = ibv_get_device_list(&count);
    if (list == nullptr) {
      int err = errno;
      throw TransportError(
          fmt::format("transport verbs: no RDMA devices: ibv_get_device_list: {}{}", errText(err),
                      err == ENOSYS ? " (this kernel has no RDMA support)" : ""));
    }
  }
  ~DeviceList() { ibv_free_device_list(list); }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
};

// True when `dev` opens and `port` is ACTIVE.
bool portActive(ibv_device* dev, int port) {
  ContextPtr ctx(ibv_open_device(dev));
  if (!ctx) return false;
  ibv_port_attr pa{};
  return ibv_query_port(ctx.get(), static_cast<uint8_t>(port), &pa) == 0 &&
         pa.state == IBV_PORT_ACTIVE;
}

std::string deviceNames(const DeviceList& dl) {
  std::string s;
  for (int i = 0; i < dl.count; ++i) {
    if (!s.empty()) s += ", ";
    s += ibv_get_device_name(dl.list[i]);
  }
  return s;
}

// Largest inline size in [0, hi] for which ibv_create_qp succeeds; -1 if none does.
int64_t probeInlineCap(Core& core, uint32_t hi) {
  int64_t lo = -1;  // largest known good
  int64_t bad = static_cast<int64_t>(hi) + 1;
  // Check 0 first: if it fails, the QP cannot be created for another reason.
  if (QpPtr qp{core.createQp(0)}) {
    lo = 0;
  } else {
    return -1;
  }
  while (bad - lo > 1) {
    int64_t mid = lo + (bad - lo) / 2;
    if (QpPtr qp{core.createQp(static_cast<uint32_t>(mid))}) {
      lo = mid;
    } else {
      bad = mid;
    }
  }
  return lo;
}

// The device to open: --device by name, else the first whose `port` is ACTIVE.
ibv_device* chooseDevice(const DeviceList& dl, const DeviceOptions& options) {
  if (!options.device.empty()) {
    for (int i = 0; i < dl.count; ++i)
      if (options.device == ibv_get_device_name(dl.list[i])) return dl.list[i];
    throw UsageError(fmt::format("--device {}: no such RDMA device (devices: {})", options.device,
                                 deviceNames(dl)));
  }
  for (int i = 0; i < dl.count; ++i)
    if (portActive(dl.list[i], options.ibPort)) return dl.list[i];
  throw TransportError(
      fmt::format("verbs: no RDMA device has port {} ACTIVE (devices: {}; see `rdmabench info`)",
                  options.ibPort, deviceNames(dl)));
}

// Opens the context: through rdma_get_devices() in rdma_cm mode (rdma_cm ids resolve to
// librdmacm's own contexts, and the PD and CQ must live on the same one), else directly.
void openContext(Core& c, ibv_device* chosen) {
  if (c.rdmaCm) {
    int n = 0;
    c.cmDevices = rdma_get_devices(&n);
    if (c.cmDevices == nullptr) {
      int err = errno;
      throw TransportError(fmt::format(
          "rdma_get_devices: {} (--rdma-cm needs the rdma_ucm kernel module)", errText(err)));
    }
    for (int i = 0; i < n; ++i)
      if (c.name == ibv_get_device_name(c.cmDevices[i]->device)) c.ctx = c.cmDevices[i];
    if (c.ctx == nullptr)
      throw TransportError(
          fmt::format("--rdma-cm: librdmacm does not list device {} ({} devices)", c.name, n));
  } else {
    c.ctx = ibv_open_device(chosen);
  }
  if (c.ctx == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_open_device {}: {}", c.name, errText(err)));
  }
}

// Device and port attributes; the port must exist and be ACTIVE.
void queryDeviceAndPort(Core& c) {
  const int port = c.port;
  if (int rc = ibv_query_device(c.ctx, &c.devAttr); rc != 0)
    throw TransportError(fmt::format("ibv_query_device {}: {}", c.name, errText(rc)));
  if (port < 1 || port > c.devAttr.phys_port_cnt)
    throw UsageError(fmt::format("--ib-port {}: out of range 1..{} for {}", port,
                                 c.devAttr.phys_port_cnt, c.name));
  if (int rc = ibv_query_port(c.ctx, static_cast<uint8_t>(port), &c.portAttr); rc != 0)
    throw TransportError(fmt::format("ibv_query_port {} port {}: {}", c.name, port, errText(rc)));
  if (c.portAttr.state != IBV_PORT_ACTIVE)
    throw TransportError(fmt::format("{} port {} is {}, not ACTIVE", c.name, port,
                                     ibv_port_state_str(c.portAttr.state)));
  c.ethernet = c.portAttr.link_layer == IBV_LINK_LAYER_ETHERNET;
}

// The GID entry --gid-index names; UsageError when it is out of range or empty.
GidEntry requestedGid(const Core& c, const std::vector<GidEntry>& table, int gidIndex) {
  if (gidIndex >= c.portAttr.gid_tbl_len)
    throw UsageError(fmt::format("--gid-index {}: out of range 0..{} for {} port {}", gidIndex,
                                 c.portAttr.gid_tbl_len - 1, c.name, c.port));
  auto it = std::find_if(table.begin(), table.end(),
                         [&](const GidEntry& e) { return e.index == gidIndex; });
  if (it != table.end()) return *it;
  std::string populated;
  for (const auto& e : table)
    populated += (populated.empty() ? "" : ", ") + std::to_string(e.index);
  throw UsageError(fmt::format("--gid-index {}: entry is empty on {} port {} (populated: {})",
                               gidIndex, c.name, c.port, populated.empty() ? "none" : populated));
}

// The GID entry chosen without --gid-index: on Ethernet (RoCE) by the route to the peer
// (selectGidIndex), on InfiniBand entry 0.
GidEntry automaticGid(const Core& c, const std::vector<GidEntry>& table,
                      const DeviceOptions& options) {
  int index =
      c.ethernet ? selectGidIndex(table, resolveRouteHint(options.peerHost, options.localHost)) : 0;
  auto it =
      std::find_if(table.begin(), table.end(), [&](const GidEntry& e) { return e.index == index; });
  if (it != table.end()) return *it;
  if (c.ethernet)
    throw TransportError(fmt::format(
        "{} port {}: GID table has no usable entry (is an IP address configured on its netdev?)",
        c.name, c.port));
  GidEntry none;
  none.index = 0;  // IB without a readable table: the GID is only used with a GRH
  return none;
}

void chooseGid(Core& c, const DeviceOptions& options) {
  std::vector<GidEntry> table = readGidTable(c.ctx, c.port, c.portAttr.gid_tbl_len);
  c.gid = options.gidIndex >= 0 ? requestedGid(c, table, options.gidIndex)
                                : automaticGid(c, table, options);
  c.gidIndex = c.gid.index;
}

// A queue depth: the request (UsageError above max_qp_wr) or the default capped by it.
uint32_t queueDepth(const Core& c, uint32_t requested, uint32_t dflt, const char* option) {
  auto max = static_cast<uint32_t>(c.devAttr.max_qp_wr);
  if (requested == 0) return std::min(dflt, max);
  if (requested > max)
    throw UsageError(
        fmt::format("{} {}: above max_qp_wr {} of {}", option, requested, max, c.name));
  return requested;
}

// The path MTU: --mtu (at most the active MTU; with rdma_cm only the active one) or the
// port's active MTU.
void choosePathMtu(Core& c, uint32_t requestedBytes) {
  c.mtu = c.portAttr.active_mtu;
  if (requestedBytes == 0) return;
  auto m = mtuFromBytes(requestedBytes);
  if (!m)
    throw UsageError(
        fmt::format("--mtu {}: not a path MTU (256, 512, 1024, 2048 or 4096)", requestedBytes));
  if (*m > c.portAttr.active_mtu)
    throw UsageError(fmt::format("--mtu {}: above the active MTU {} of {} port {}", requestedBytes,
                                 mtuToBytes(c.portAttr.active_mtu), c.name, c.port));
  c.mtu = *m;
  if (c.rdmaCm && c.mtu != c.portAttr.active_mtu)
    throw UsageError(fmt::format(
        "--mtu {} with --rdma-cm: rdma_cm takes the path MTU from the route (active MTU {} of "
        "{} port {}); drop --mtu or --rdma-cm",
        requestedBytes, mtuToBytes(c.portAttr.active_mtu), c.name, c.port));
}

// Event mode: a non-blocking completion channel.
void createCompletionChannel(Core& c) {
  c.channel = ibv_create_comp_channel(c.ctx);
  if (c.channel == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_create_comp_channel on {}: {}", c.name, errText(err)));
  }
  int flags = fcntl(c.channel->fd, F_GETFL);
  if (flags < 0 || fcntl(c.channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw SystemError(fmt::format("fcntl O_NONBLOCK on the completion channel of {}", c.name),
                      errno);
}

// PD, completion channel (event mode) and the one CQ (2 x (tx + rx) CQEs, capped by max_cqe),
// armed in event mode.
void createPdAndCq(Core& c, bool useEvent) {
  c.pd = ibv_alloc_pd(c.ctx);
  if (c.pd == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_alloc_pd on {}: {}", c.name, errText(err)));
  }
  if (useEvent) createCompletionChannel(c);
  int cqe = static_cast<int>(
      std::min<int64_t>(2 * static_cast<int64_t>(c.txDepth + c.rxDepth), c.devAttr.max_cqe));
  c.cq = ibv_create_cq(c.ctx, cqe, nullptr, c.channel, 0);
  if (c.cq == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_create_cq ({} CQEs, max_cqe {}) on {}: {}", cqe,
                                     c.devAttr.max_cqe, c.name, errText(err)));
  }
  c.cqSize = c.cq->cqe;
  if (c.channel != nullptr) {
    if (int rc = ibv_req_notify_cq(c.cq, 0); rc != 0)
      throw TransportError(fmt::format("ibv_req_notify_cq on {}: {}", c.name, errText(rc)));
  }
}

// The largest inline size up to `want` that a QP with these depths accepts (probed by creating
// QPs); throws when no QP can be created at all (`err`: errno of the first attempt).
uint32_t inlineCapOrThrow(Core& c, uint32_t want, int err) {
  int64_t cap = probeInlineCap(c, want);
  if (cap < 0)
    throw TransportError(fmt::format("ibv_create_qp (RC, tx depth {}, rx depth {}) on {}: {}",
                                     c.txDepth, c.rxDepth, c.name, errText(err)));
  return static_cast<uint32_t>(cap);
}

// Inline size: without --inline the default (capped by what the driver reports or accepts);
// with --inline exactly that, or a UsageError naming the cap.
void chooseInline(Core& c, int64_t requested) {
  if (requested < 0) {
    uint32_t reported = 0;
    if (QpPtr qp{c.createQp(kDefaultInline, &reported)}) {
      c.inlineBytes = std::min(reported, kDefaultInline);
    } else {
      c.inlineBytes = inlineCapOrThrow(c, kDefaultInline, errno);
    }
    return;
  }
  if (requested > UINT32_MAX) throw UsageError(fmt::format("--inline {}: too large", requested));
  auto want = static_cast<uint32_t>(requested);
  if (QpPtr qp{c.createQp(want)}) {
    c.inlineBytes = want;
    return;
  }
  const uint32_t cap = inlineCapOrThrow(c, want, errno);
  throw UsageError(
      fmt::format("--inline {}: above the inline cap {} of {} (largest max_inline_data "
                  "ibv_create_qp accepts with tx depth {})",
                  want, cap, c.name, c.txDepth));
}

}  // namespace

std::unique_ptr<Device> openDevice(const DeviceOptions& options) {
  DeviceList dl;
  if (dl.count == 0)
    throw TransportError("verbs: no RDMA devices (ibv_get_device_list returned 0)");
  ibv_device* chosen = chooseDevice(dl, options);

  auto core = std::make_shared<Core>();
  Core& c = *core;
  c.name = ibv_get_device_name(chosen);
  c.port = options.ibPort;
  c.rdmaCm = options.rdmaCm;
  c.localHost = options.localHost;
  c.acceptOnly = options.acceptOnly;
  c.peerHost = options.peerHost;
  openContext(c, chosen);
  queryDeviceAndPort(c);
  chooseGid(c, options);
  c.txDepth = queueDepth(c, options.txDepth, kDefaultTxDepth, "--tx-depth");
  c.rxDepth = queueDepth(c, options.rxDepth, kDefaultRxDepth, "--rx-depth");
  choosePathMtu(c, options.mtu);
  createPdAndCq(c, options.useEvent());
  chooseInline(c, options.inlineBytes);
  return makeVerbsDevice(std::move(core));
}

}  // namespace rdmabench::transport::verbs
