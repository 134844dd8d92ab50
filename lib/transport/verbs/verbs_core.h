#pragma once
// Internals of the libibverbs backend shared by its .cc files (not part of the transport
// boundary; only lib/transport/verbs/ and its tests include this).
//
// Ownership: a Core holds the ibv_context, the one PD, the optional completion channel and
// the one CQ of an opened device. The Device, every MemoryRegion and every Endpoint hold a
// shared_ptr to it, so teardown is correct in any destruction order (exceptions unwinding,
// Ctrl-C): QPs and MRs go first, the Core (CQ, channel, PD, context) with the last owner.
// Thread-safety: none; one thread at a time, like every Device (transport.h).

#include <infiniband/verbs.h>

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/error_texts.h"
#include "transport/transport.h"
#include "transport/verbs/gid_select.h"

namespace rdmabench::transport::verbs {

class VerbsEndpoint;

// RAII for libibverbs objects: each deleter calls the matching destroy/free function. They
// never throw (a failing destroy cannot be handled in a destructor; its return code is dropped).
struct QpDeleter {
  void operator()(ibv_qp* p) const noexcept { ibv_destroy_qp(p); }
};
struct MrDeleter {
  void operator()(ibv_mr* p) const noexcept { ibv_dereg_mr(p); }
};
struct ContextDeleter {
  void operator()(ibv_context* p) const noexcept { ibv_close_device(p); }
};
struct DeviceListDeleter {
  void operator()(ibv_device** p) const noexcept { ibv_free_device_list(p); }
};
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using DeviceListPtr = std::unique_ptr<ibv_device*, DeviceListDeleter>;

// Per-device state and the shared CQ. Created by openDevice().
struct Core {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;  // only in event mode
  ibv_cq* cq = nullptr;
  int cqSize = 0;  // CQEs the CQ holds (as reported by ibv_create_cq / ibv_resize_cq)

  std::string name;  // device name, e.g. "rxe0"
  int port = 1;
  ibv_device_attr devAttr{};
  ibv_port_attr portAttr{};
  bool ethernet = false;  // link layer Ethernet (RoCE): GRH with GIDs on every packet

  int gidIndex = 0;
  GidEntry gid;  // the chosen entry
  uint32_t txDepth = 0;
  uint32_t rxDepth = 0;
  uint32_t inlineBytes = 0;
  ibv_mtu mtu = IBV_MTU_1024;  // requested path MTU (<= active MTU)

  bool rdmaCm = false;                // connect QPs with librdmacm (verbs_cm.cc)
  ibv_context** cmDevices = nullptr;  // rdma_get_devices() list owning `ctx` in rdma_cm mode
  std::string localHost;              // DeviceOptions::localHost (rdma_cm bind fallback)
  // DeviceOptions::acceptOnly / peerHost: a server session is rdma_cm's active side only towards
  // the host of its control connection (transport/peer_check.h).
  bool acceptOnly = false;
  std::string peerHost;

  int liveQps = 0;  // QPs created on the CQ (connectors + endpoints)
  std::unordered_map<uint32_t, VerbsEndpoint*> endpoints;  // by local QPN
  std::deque<Completion> pending;  // completions polled early (QP teardown, event wait)
  ErrorTexts errors;               // texts of failed completions (Device::errorText)

  Core() = default;
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;
  ~Core();

  // Init attributes of an RC QP on the CQ with the configured depths, 1 SGE each way.
  ibv_qp_init_attr qpInitAttr(uint32_t inlineRequest) const;
  // Creates an RC QP on the CQ with the configured depths and `inlineBytes`; nullptr on
  // failure with errno set. On success `*reportedInline` (if non-null) receives the inline
  // size the driver reports.
  ibv_qp* createQp(uint32_t inlineRequest, uint32_t* reportedInline = nullptr);
  // Grows the CQ so that `qps` QPs with full queues fit. Throws TransportError.
  void reserveCq(int qps);
  // Polls the CQ into `out` (at most `max`), translating through the endpoints; completions
  // of QP `skipQpn` (a QP being destroyed) are dropped. Returns the count written.
  size_t pollCq(Completion* out, size_t max, uint32_t skipQpn = 0, bool skip = false);
  // Moves everything currently in the CQ into `pending`, dropping QP `skipQpn`'s entries.
  void drainToPending(uint32_t skipQpn, bool skip);
};

// What an rdma_cm connection keeps alive for its QP (cm ids, event channel). The endpoint
// calls destroyQp() first (rdma_destroy_qp), then destroys this object (the ids).
class CmResources {
 public:
  virtual ~CmResources() = default;
  virtual void destroyQp() = 0;
};

// rdma_cm mode: a Connector whose localAddress() is a listening rdma_cm id's IP and port
// (verbs_cm.cc). Throws TransportError naming the call and rdma_cm's error text.
std::unique_ptr<Connector> makeCmConnector(std::shared_ptr<Core> core);

// Out-of-band mode: a Connector whose localAddress() carries the QP attributes
// (verbs_connector.cc). Throws TransportError when the QP cannot be created.
std::unique_ptr<Connector> makeOobConnector(std::shared_ptr<Core> core);

// The Device over an opened Core (verbs_device.cc).
std::unique_ptr<Device> makeVerbsDevice(std::shared_ptr<Core> core);

// Wraps a QP that librdmacm has brought to RTS into an Endpoint; the QP's attributes (peer
// QPN, path MTU, GIDs, rd_atomic) are read back with ibv_query_qp. `remoteGidIndex` is only
// informational. The endpoint owns `qp` (counted in core->liveQps) and `resources`.
std::unique_ptr<Endpoint> adoptCmQp(std::shared_ptr<Core> core, ibv_qp* qp,
                                    std::unique_ptr<CmResources> resources);

// Populated entries of `port`'s GID table (ibv_query_gid_ex; sysfs gid_attrs when that is
// unsupported). Empty (all-zero) entries are skipped. Never throws.
std::vector<GidEntry> readGidTable(ibv_context* ctx, int port, int tableLength);

// Text for libibverbs enums.
int mtuToBytes(ibv_mtu mtu);
const char* linkLayerName(uint8_t linkLayer);

}  // namespace rdmabench::transport::verbs
