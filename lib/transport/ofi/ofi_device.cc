// libfabric Device: opening (fabric, domain, AV, CQ, the shared RDM endpoint), capabilities,
// properties, memory registration, and the Endpoint / Connector facades. See ofi_device.h.

#include "transport/ofi/ofi_device.h"

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/text_escape.h"
#include "transport/backends.h"
#include "transport/ofi/ofi_device_impl.h"
#include "transport/ofi/ofi_info.h"
#include "transport/ofi/ofi_library.h"

namespace rdmabench::transport::ofi {
namespace {

const char* progressName(fi_progress p) {
  switch (p) {
    case FI_PROGRESS_AUTO:
      return "FI_PROGRESS_AUTO";
    case FI_PROGRESS_MANUAL:
      return "FI_PROGRESS_MANUAL";
    default:
      return "FI_PROGRESS_UNSPEC";
  }
}

const char* threadingName(fi_threading t) {
  switch (t) {
    case FI_THREAD_SAFE:
      return "FI_THREAD_SAFE";
    case FI_THREAD_FID:
      return "FI_THREAD_FID";
    case FI_THREAD_DOMAIN:
      return "FI_THREAD_DOMAIN";
    case FI_THREAD_COMPLETION:
      return "FI_THREAD_COMPLETION";
    case FI_THREAD_ENDPOINT:
      return "FI_THREAD_ENDPOINT";
    default:
      return "FI_THREAD_UNSPEC";
  }
}

std::string modeNames(uint64_t mode) {
  std::string out;
  if (mode & FI_CONTEXT) out += "FI_CONTEXT";
  if (mode & FI_CONTEXT2) out += out.empty() ? "FI_CONTEXT2" : "|FI_CONTEXT2";
  uint64_t rest = mode & ~(FI_CONTEXT | FI_CONTEXT2);
  if (rest) out += fmt::format("{}0x{:x}", out.empty() ? "" : "|", rest);
  return out.empty() ? "none" : out;
}

class OfiEndpoint final : public Endpoint {
 public:
  OfiEndpoint(OfiDevice& dev, uint32_t conn) : dev_(dev), conn_(conn) {}
  ~OfiEndpoint() override { dev_.closeConnection(conn_); }
  OfiEndpoint(const OfiEndpoint&) = delete;
  OfiEndpoint& operator=(const OfiEndpoint&) = delete;
  PostResult postSend(const MemoryRegion& mr, uint64_t offset, uint32_t length, uint64_t context,
                      bool signaled) override {
    return dev_.postSend(conn_, mr, offset, length, context, signaled);
  }
  PostResult postRecv(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context) override {
    return dev_.postRecv(conn_, mr, offset, length, context);
  }
  PostResult postWrite(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                       const RemoteRegion& remote, uint64_t remoteOffset, uint64_t context,
                       bool signaled) override {
    return dev_.postRma(conn_, OpKind::kWrite, mr, offset, length, remote, remoteOffset, context,
                        signaled);
  }
  PostResult postRead(const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      const RemoteRegion& remote, uint64_t remoteOffset,
                      uint64_t context) override {
    return dev_.postRma(conn_, OpKind::kRead, mr, offset, length, remote, remoteOffset, context,
                        true);
  }
  PreparedOp prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                     const RemoteRegion* remote, uint64_t remoteOffset) override {
    return dev_.prepare(op, mr, offset, length, remote, remoteOffset);
  }
  uint32_t postBatch(const PreparedOp& op, const BatchPost* posts, uint32_t count) override {
    return dev_.postBatch(conn_, op, posts, count);
  }
  std::string peerName() const override { return dev_.conn(conn_).peerName; }
  ConnectionInfo info() const override {
    const ConnState& c = dev_.conn(conn_);
    ConnectionInfo i;
    i.peer = c.peerName;
    if (dev_.msg()) {
      addFact(i.facts, "endpoint_type", "FI_EP_MSG");
      addFact(i.facts, "role", c.role);
      return i;
    }
    addFact(i.facts, "fi_addr", c.addr);
    addFact(i.facts, "connection_tag", c.localTag);
    addFact(i.facts, "peer_connection_tag", c.peerTag);
    return i;
  }

 private:
  OfiDevice& dev_;
  uint32_t conn_;
};

class OfiConnector final : public Connector {
 public:
  OfiConnector(OfiDevice& dev, uint32_t conn) : dev_(dev), conn_(conn) {}
  std::vector<uint8_t> localAddress() const override { return dev_.localAddress(conn_); }
  std::unique_ptr<Endpoint> connect(const std::vector<uint8_t>& remoteAddress,
                                    const Deadline& deadline) override {
    if (used_) throw UsageError("ofi Connector::connect called twice");
    throwIfInterrupted("ofi connect");
    if (deadline.expired())
      throw TimeoutError("ofi connect: deadline passed before fi_av_insert of the peer");
    used_ = true;
    if (dev_.msg())
      dev_.connectMsg(conn_, remoteAddress, deadline);
    else
      dev_.connect(conn_, remoteAddress);
    return std::make_unique<OfiEndpoint>(dev_, conn_);
  }

 private:
  OfiDevice& dev_;
  uint32_t conn_;
  bool used_ = false;
};

}  // namespace

OfiDevice::OfiDevice(const DeviceOptions& options, const Tuning& tuning)
    : sel_(selectInfo(options)) {
  fi_info* info = sel_.info.get();
  domainName_ = info->domain_attr->name ? info->domain_attr->name : "";
  label_ = fmt::format("provider '{}' domain '{}'", info->fabric_attr->prov_name, domainName_);
  const auto mrMode = static_cast<uint64_t>(info->domain_attr->mr_mode);
  mrLocal_ = mrMode & FI_MR_LOCAL;
  mrVirtAddr_ = mrMode & FI_MR_VIRT_ADDR;
  mrProvKey_ = mrMode & FI_MR_PROV_KEY;
  mrEndpoint_ = mrMode & FI_MR_ENDPOINT;
  if (mrMode & ~kMrModeHonoured)
    throw TransportError(fmt::format("fi_getinfo on {}: returned mr_mode {} beyond what we asked",
                                     label_, mrModeNames(mrMode)));
  applyLimits(options, tuning);
  openFabric();
  deviceId_ = rng_();
  // A server session takes the accepting role of every FI_EP_MSG connection (ofi_msg.cc).
  acceptOnly_ = options.acceptOnly;
  if (acceptOnly_) deviceId_ = 0;
  peerHost_ = options.peerHost;
  const uint32_t poolSize = txDepth_ + rxDepth_ + 64;
  openCq(poolSize, options.useEvent());
  pool_.init(poolSize);
  initCaps();
  if (!sel_.msg) openRdmEndpoint();  // FI_EP_MSG: endpoints are opened per connection
}

// --inline against inject_size, the message size limit and the queue depths (UsageError when
// an option exceeds the provider's limit).
void OfiDevice::applyLimits(const DeviceOptions& options, const Tuning& tuning) {
  const fi_info* info = sel_.info.get();
  const uint64_t injectSize = info->tx_attr->inject_size;
  if (options.inlineBytes >= 0) {
    if (static_cast<uint64_t>(options.inlineBytes) > injectSize)
      throw UsageError(fmt::format("--inline {}: exceeds inject_size {} B of {}",
                                   options.inlineBytes, injectSize, label_));
    injectLimit_ = static_cast<uint64_t>(options.inlineBytes);
  } else {
    injectLimit_ = injectSize;
  }
  maxMessage_ = info->ep_attr->max_msg_size;
  if (tuning.maxMessageBytes != 0) maxMessage_ = std::min(maxMessage_, tuning.maxMessageBytes);

  auto depth = [&](uint32_t asked, size_t provider, const char* option, const char* attr) {
    const uint64_t limit = provider == 0 ? kMaxDepth : std::min<uint64_t>(provider, kMaxDepth);
    if (asked > limit)
      throw UsageError(
          fmt::format("{} {}: exceeds {} {} of {}", option, asked, attr, limit, label_));
    return asked != 0 ? asked : static_cast<uint32_t>(std::min<uint64_t>(limit, kDefaultDepth));
  };
  txDepth_ = depth(options.txDepth, info->tx_attr->size, "--tx-depth", "tx_attr->size");
  rxDepth_ = depth(options.rxDepth, info->rx_attr->size, "--rx-depth", "rx_attr->size");
}

// Fabric, domain and (FI_EP_RDM) the address vector.
void OfiDevice::openFabric() {
  fi_info* info = sel_.info.get();
  fid_fabric* fabric = nullptr;
  check("fi_fabric", fi_fabric(info->fabric_attr, &fabric, nullptr));
  fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  check("fi_domain", fi_domain(fabric_.get(), info, &domain, nullptr));
  domain_.reset(domain);

  if (!sel_.msg) {
    fi_av_attr avAttr{};
    avAttr.type = FI_AV_TABLE;
    fid_av* av = nullptr;
    check("fi_av_open(FI_AV_TABLE)", fi_av_open(domain_.get(), &avAttr, &av, nullptr));
    av_.reset(av);
  }
}

// The one CQ of `poolSize` entries; in event mode with a wait fd (waitFd_).
void OfiDevice::openCq(uint32_t poolSize, bool useEvent) {
  fi_cq_attr cqAttr{};
  // verbs FI_EP_MSG offers no tagged CQ format (fi_cq_open: ENOSYS); MSG needs no tags.
  cqAttr.format = sel_.msg ? FI_CQ_FORMAT_MSG : FI_CQ_FORMAT_TAGGED;
  cqAttr.size = poolSize;
  // Event mode: a file descriptor to sleep on (fi_trywait + poll, fabtests' FT_COMP_WAIT_FD
  // method), so -e and oversubscribed collectives sleep instead of spinning.
  cqAttr.wait_obj = useEvent ? FI_WAIT_FD : FI_WAIT_NONE;
  fid_cq* cq = nullptr;
  if (int rc = fi_cq_open(domain_.get(), &cqAttr, &cq, nullptr); rc != 0) {
    if (useEvent)
      throw TransportError(
          fmt::format("--use-event: {} cannot give its completion queue a wait fd (fi_cq_open with "
                      "FI_WAIT_FD: {}); run without -e",
                      label_, fiError(rc)));
    fail("fi_cq_open", rc);
  }
  cq_.reset(cq);
  if (useEvent) {
    int fd = -1;
    if (int rc = fi_control(&cq_->fid, FI_GETWAIT, &fd); rc != 0 || fd < 0)
      throw TransportError(
          fmt::format("--use-event: {}: fi_control(FI_GETWAIT) on the completion queue: {}", label_,
                      fiError(rc)));
    waitFd_ = fd;
  }
}

// FI_EP_RDM: the one endpoint, bound to the AV and CQ, enabled, and its name (epName_).
void OfiDevice::openRdmEndpoint() {
  fi_info* info = sel_.info.get();
  int rc = 0;
  fid_ep* ep = nullptr;
  check("fi_endpoint(FI_EP_RDM)", fi_endpoint(domain_.get(), info, &ep, nullptr));
  ep_.reset(ep);
  check("fi_ep_bind(av)", fi_ep_bind(ep_.get(), &av_->fid, 0));
  check("fi_ep_bind(cq, FI_TRANSMIT|FI_RECV)",
        fi_ep_bind(ep_.get(), &cq_->fid, FI_TRANSMIT | FI_RECV));
  rc = fi_enable(ep_.get());
  if (rc == -FI_EINVAL && label_.find("ofi_rxm") != std::string::npos) {
    const char* universe = std::getenv("FI_UNIVERSE_SIZE");
    throw TransportError(fmt::format(
        "fi_enable on {}: {}; ofi_rxm opens its core CQ with FI_UNIVERSE_SIZE ({}) x "
        "(FI_OFI_RXM_MSG_TX_SIZE + FI_OFI_RXM_MSG_RX_SIZE) entries, more than small devices "
        "allow (soft-RoCE: 32767): set FI_UNIVERSE_SIZE=64 for every process that opens it "
        "(the server's environment too; every rank's)",
        label_, fiError(rc), universe ? escapeForLog(universe, 20) : std::string("default 256")));
  }
  check("fi_enable", rc);

  epName_.resize(kMaxAddressBytes - kAddressHeader);
  size_t nameLen = epName_.size();
  rc = fi_getname(&ep_->fid, epName_.data(), &nameLen);
  if (rc == -FI_ETOOSMALL)
    throw TransportError(
        fmt::format("fi_getname on {}: endpoint name of {} B exceeds the {} B "
                    "that fit in a {} B transport address",
                    label_, nameLen, epName_.size(), kMaxAddressBytes));
  check("fi_getname", rc);
  epName_.resize(nameLen);
}

std::string OfiDevice::postListNote(OpKind op) const {
  std::string note = fmt::format(
      "libfabric: FI_MORE on all but the last {} of a batch (a hint the provider may batch on)",
      toString(op));
  if (op == OpKind::kSend || op == OpKind::kWrite)
    note += fmt::format("; {}s of at most inject_size ({} B) are posted one by one (fi_inject)",
                        toString(op), injectLimit_);
  return note;
}

void OfiDevice::initCaps() {
  const fi_info* info = sel_.info.get();
  caps_.rmaWrite = sel_.rmaGranted;
  caps_.rmaRead = sel_.rmaGranted;
  caps_.rmaEmulated = false;
  // Under manual data progress (tcp;ofi_rxm, and rxm on any core) a write completes at the
  // initiator before the target has placed it; it lands when the target reads its CQ.
  caps_.rmaNeedsTargetProgress =
      info->domain_attr->data_progress != FI_PROGRESS_AUTO ||
      std::string(info->fabric_attr->prov_name).find("ofi_rxm") != std::string::npos;
  caps_.maxMessageBytes = maxMessage_;
  caps_.maxSendQueue = txDepth_;
  caps_.maxRecvQueue = rxDepth_;
  caps_.inlineBytes = static_cast<uint32_t>(std::min<uint64_t>(injectLimit_, UINT32_MAX));
  caps_.maxOutstandingReads = sel_.rmaGranted ? txDepth_ : 0;
  caps_.sharedOpSlots = pool_.size();
}

OfiDevice::~OfiDevice() {
  drainForClose();
  // Explicit order (the op-context pool must outlive the endpoint that may still use it).
  for (auto& c : conns_) {
    c->msgEp.reset();
    c->pep.reset();
    c->eq.reset();
  }
  ep_.reset();
  cq_.reset();
  av_.reset();
  domain_.reset();
  fabric_.reset();
}

void OfiDevice::fail(const char* call, int64_t rc) const {
  throw TransportError(fmt::format("{} on {}: {}", call, label_, fiError(rc)));
}

DeviceInfo OfiDevice::info() const {
  const fi_info* info = sel_.info.get();
  DeviceInfo i;
  i.txDepth = txDepth_;
  i.rxDepth = rxDepth_;
  i.eventMode = waitFd_ >= 0;
  i.common.injectSize = info->tx_attr->inject_size;
  Facts& f = i.facts;
  addFact(f, "provider", info->fabric_attr->prov_name);
  addFact(f, "fabric", info->fabric_attr->name ? info->fabric_attr->name : "");
  addFact(f, "domain", domainName_);
  addFact(f, "endpoint_type", sel_.msg ? "FI_EP_MSG" : "FI_EP_RDM");
  addFact(f, "local_address",
          sel_.msg ? std::string("per connection (passive endpoint each)")
                   : addressString(epName_.data()));
  addFact(f, "inject_used_up_to", injectLimit_);
  addFact(f, "max_msg_size", info->ep_attr->max_msg_size);
  addFact(f, "max_msg_size_used", maxMessage_);
  addFact(f, "mr_mode", mrModeNames(static_cast<uint64_t>(info->domain_attr->mr_mode)));
  addFact(f, "mode", modeNames(info->mode));
  addFact(f, "rma", sel_.rmaGranted);
  addFact(f, "tx_size", info->tx_attr->size);
  addFact(f, "rx_size", info->rx_attr->size);
  addFact(f, "threading", threadingName(info->domain_attr->threading));
  addFact(f, "data_progress", progressName(info->domain_attr->data_progress));
  addFact(f, "av_type", sel_.msg ? "none" : "FI_AV_TABLE");
  addFact(f, "matching",
          sel_.msg ? "one connected FI_EP_MSG endpoint per connection"
                   : "FI_TAGGED, one 64-bit tag per connection");
  addFact(f, "protocol", protocolThresholds(*info));
  return i;
}

std::unique_ptr<MemoryRegion> OfiDevice::registerMemory(void* ptr, size_t bytes) {
  if (!ptr || bytes == 0)
    throw UsageError(fmt::format("registerMemory on {}: empty buffer ({} B)", label_, bytes));
  uint64_t access = FI_SEND | FI_RECV;
  if (sel_.rmaGranted) access |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  // mr_mode without FI_MR_PROV_KEY: we choose the key, unique within this domain.
  const uint64_t requestedKey = mrProvKey_ ? 0 : nextKey_++;
  fid_mr* raw = nullptr;
  int rc = fi_mr_reg(domain_.get(), ptr, bytes, access, 0, requestedKey, 0, &raw, nullptr);
  if (rc != 0)
    throw TransportError(fmt::format(
        "fi_mr_reg of {} B at {} on {}: {}{}", bytes, ptr, label_, fiError(rc),
        rc == -FI_ENOMEM || rc == -FI_EPERM ? " (locked-memory limit? check `ulimit -l`)" : ""));
  FidPtr<fid_mr> mr(raw);
  if (mrEndpoint_) {
    check("fi_mr_bind(ep)", fi_mr_bind(mr.get(), &ep_->fid, 0));
    check("fi_mr_enable", fi_mr_enable(mr.get()));
  }
  auto* data = static_cast<uint8_t*>(ptr);
  return std::make_unique<OfiMemoryRegion>(std::move(mr), data, bytes,
                                           mrVirtAddr_ ? reinterpret_cast<uint64_t>(data) : 0);
}

std::unique_ptr<Connector> OfiDevice::createConnector() {
  auto c = std::make_unique<ConnState>();
  c->localTag = conns_.size() + 1;
  c->queues.txRing.resize(txDepth_);
  c->ep = ep_.get();
  if (sel_.msg) openMsgConnector(*c);
  conns_.push_back(std::move(c));
  return std::make_unique<OfiConnector>(*this, static_cast<uint32_t>(conns_.size() - 1));
}

std::unique_ptr<Device> openDevice(const DeviceOptions& options, const Tuning& tuning) {
  requireLibfabric();  // loaded on first use (ofi_library.h)
  return std::make_unique<OfiDevice>(options, tuning);
}

std::unique_ptr<Device> openDevice(const DeviceOptions& options) {
  return openDevice(options, Tuning{});
}

BackendStatus probe() {
  if (const std::string& why = loadLibfabric(); !why.empty()) {
    BackendStatus s;
    s.name = "ofi";
    s.built = true;
    s.reason = "libfabric.so.1 could not be loaded: " + why;
    return s;
  }
  return probeProviders();
}

}  // namespace rdmabench::transport::ofi
