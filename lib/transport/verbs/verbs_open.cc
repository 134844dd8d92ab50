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

}  // namespace

std::unique_ptr<Device> openDevice(const DeviceOptions& options) {
  DeviceList dl;
  if (dl.count == 0)
    throw TransportError("verbs: no RDMA devices (ibv_get_device_list returned 0)");

  const int port = options.ibPort;
  ibv_device* chosen = nullptr;
  if (!options.device.empty()) {
    for (int i = 0; i < dl.count; ++i)
      if (options.device == ibv_get_device_name(dl.list[i])) chosen = dl.list[i];
    if (chosen == nullptr)
      throw UsageError(fmt::format("--device {}: no such RDMA device (devices: {})", options.device,
                                   deviceNames(dl)));
  } else {
    for (int i = 0; i < dl.count && chosen == nullptr; ++i)
      if (portActive(dl.list[i], port)) chosen = dl.list[i];
    if (chosen == nullptr)
      throw TransportError(fmt::format(
          "verbs: no RDMA device has port {} ACTIVE (devices: {}; see `rdmabench info`)", port,
          deviceNames(dl)));
  }

  auto core = std::make_shared<Core>();
  Core& c = *core;
  c.name = ibv_get_device_name(chosen);
  c.port = port;
  c.rdmaCm = options.rdmaCm;
  c.localHost = options.localHost;
  c.acceptOnly = options.acceptOnly;
  c.peerHost = options.peerHost;
  if (c.rdmaCm) {
    // rdma_cm ids resolve to librdmacm's own contexts: the PD and CQ must live on the same
    // one, so the device is opened through rdma_get_devices().
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

  // GID.
  std::vector<GidEntry> table = readGidTable(c.ctx, port, c.portAttr.gid_tbl_len);
  if (options.gidIndex >= 0) {
    if (options.gidIndex >= c.portAttr.gid_tbl_len)
      throw UsageError(fmt::format("--gid-index {}: out of range 0..{} for {} port {}",
                                   options.gidIndex, c.portAttr.gid_tbl_len - 1, c.name, port));
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const GidEntry& e) { return e.index == options.gidIndex; });
    if (it == table.end()) {
      std::string populated;
      for (const auto& e : table)
        populated += (populated.empty() ? "" : ", ") + std::to_string(e.index);
      throw UsageError(fmt::format("--gid-index {}: entry is empty on {} port {} (populated: {})",
                                   options.gidIndex, c.name, port,
                                   populated.empty() ? "none" : populated));
    }
    c.gid = *it;
  } else {
    int index = c.ethernet
                    ? selectGidIndex(table, resolveRouteHint(options.peerHost, options.localHost))
                    : 0;
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const GidEntry& e) { return e.index == index; });
    if (it != table.end()) {
      c.gid = *it;
    } else if (c.ethernet) {
      throw TransportError(fmt::format(
          "{} port {}: GID table has no usable entry (is an IP address configured on its "
          "netdev?)",
          c.name, port));
    } else {
      c.gid.index = 0;  // IB without a readable table: the GID is only used with a GRH
    }
  }
  c.gidIndex = c.gid.index;

  // Queue depths.
  auto depth = [&](uint32_t requested, uint32_t dflt, const char* option) -> uint32_t {
    auto max = static_cast<uint32_t>(c.devAttr.max_qp_wr);
    if (requested == 0) return std::min(dflt, max);
    if (requested > max)
      throw UsageError(
          fmt::format("{} {}: above max_qp_wr {} of {}", option, requested, max, c.name));
    return requested;
  };
  c.txDepth = depth(options.txDepth, kDefaultTxDepth, "--tx-depth");
  c.rxDepth = depth(options.rxDepth, kDefaultRxDepth, "--rx-depth");

  // Path MTU.
  c.mtu = c.portAttr.active_mtu;
  if (options.mtu != 0) {
    auto m = mtuFromBytes(options.mtu);
    if (!m)
      throw UsageError(
          fmt::format("--mtu {}: not a path MTU (256, 512, 1024, 2048 or 4096)", options.mtu));
    if (*m > c.portAttr.active_mtu)
      throw UsageError(fmt::format("--mtu {}: above the active MTU {} of {} port {}", options.mtu,
                                   mtuToBytes(c.portAttr.active_mtu), c.name, port));
    c.mtu = *m;
    if (c.rdmaCm && c.mtu != c.portAttr.active_mtu)
      throw UsageError(fmt::format(
          "--mtu {} with --rdma-cm: rdma_cm takes the path MTU from the route (active MTU {} of "
          "{} port {}); drop --mtu or --rdma-cm",
          options.mtu, mtuToBytes(c.portAttr.active_mtu), c.name, port));
  }

  // PD, completion channel, CQ.
  c.pd = ibv_alloc_pd(c.ctx);
  if (c.pd == nullptr) {
    int err = errno;
    throw TransportError(fmt::format("ibv_alloc_pd on {}: {}", c.name, errText(err)));
  }
  if (options.useEvent) {
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

  // Inline size: what a QP with these depths accepts (probed by creating QPs).
  if (options.inlineBytes < 0) {
    uint32_t reported = 0;
    if (QpPtr qp{c.createQp(kDefaultInline, &reported)}) {
      c.inlineBytes = std::min(reported, kDefaultInline);
    } else {
      int err = errno;
      int64_t cap = probeInlineCap(c, kDefaultInline);
      if (cap < 0)
        throw TransportError(fmt::format("ibv_create_qp (RC, tx depth {}, rx depth {}) on {}: {}",
                                         c.txDepth, c.rxDepth, c.name, errText(err)));
      c.inlineBytes = static_cast<uint32_t>(cap);
    }
  } else {
    if (options.inlineBytes > UINT32_MAX)
      throw UsageError(fmt::format("--inline {}: too large", options.inlineBytes));
    auto want = static_cast<uint32_t>(options.inlineBytes);
    if (QpPtr qp{c.createQp(want)}) {
      c.inlineBytes = want;
    } else {
      int err = errno;
      int64_t cap = probeInlineCap(c, want);
      if (cap < 0)
        throw TransportError(fmt::format("ibv_create_qp (RC, tx depth {}, rx depth {}) on {}: {}",
                                         c.txDepth, c.rxDepth, c.name, errText(err)));
      throw UsageError(fmt::format(
          "--inline {}: above the inline cap {} of {} (largest max_inline_data ibv_create_qp "
          "accepts with tx depth {})",
          want, cap, c.name, c.txDepth));
    }
  }
  return makeVerbsDevice(std::move(core));
}

}  // namespace rdmabench::transport::verbs
