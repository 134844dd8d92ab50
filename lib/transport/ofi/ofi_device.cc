#include "transport/ofi/ofi_device.h"

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <type_traits>

#include "common/error.h"
#include "common/interrupt.h"
#include "transport/backends.h"
#include "transport/ofi/ofi_info.h"

namespace rdmabench::transport::ofi {
namespace {

template <class T>
struct FidCloser {
  void operator()(T* p) const {
    if (p) fi_close(&p->fid);
  }
};
// Owns one libfabric object (fi_close on destruction).
template <class T>
using FidPtr = std::unique_ptr<T, FidCloser<T>>;

// Our address blob: magic, version, name length, our connection tag, addr_format, then the
// fi_getname bytes of the shared endpoint.
constexpr uint32_t kAddressMagic = 0x464f4252;  // "RBOF" little-endian
constexpr uint8_t kAddressVersion = 1;
constexpr size_t kAddressHeader = 20;
// FI_EP_MSG address blob: the same first 20 bytes (type byte 1, the device id in place of the
// tag), then the connector's random token (8 B), then the fi_getname bytes of its passive
// endpoint.
constexpr uint8_t kTypeMsg = 1;
constexpr size_t kMsgAddressHeader = 28;
constexpr int kEqWaitSliceMs = 10;        // fi_eq_sread slice (interrupt checks in between)
constexpr size_t kCmDataBytes = 8;        // connection request / accept payload: the token
constexpr size_t kCqBatch = 32;           // entries per fi_cq_read
constexpr int kCqReadsPerPoll = 4;        // fi_cq_read calls per poll() at most
constexpr uint32_t kDefaultDepth = 1024;  // queue depth when the option is 0
constexpr uint32_t kMaxDepth = 65536;     // upper bound of any queue depth we allocate
constexpr int64_t kDrainQuietMs = 20;     // teardown: CQ quiet this long before fi_close(ep)
constexpr int64_t kDrainMaxMs = 200;      // teardown: drain at most this long

enum class SlotState : uint8_t { kFree, kPosted, kDone, kReady };

// One operation in flight. libfabric owns the first bytes (FI_CONTEXT / FI_CONTEXT2) while
// the operation is posted and hands the pointer back as op_context.
struct OpContext {
  fi_context2 fi;
  uint64_t user;
  uint32_t bytes;
  uint32_t conn;
  uint32_t nextFree;
  int32_t status;
  OpKind op;
  SlotState state;
  bool signaled;
};
static_assert(std::is_standard_layout_v<OpContext>);
static_assert(offsetof(OpContext, fi) == 0);

// One connection (Endpoint): a peer of the shared RDM endpoint, or (FI_EP_MSG) an endpoint of
// its own with its EQ (and, until connected, the passive endpoint it listens on).
struct ConnState {
  fid_ep* ep = nullptr;  // where posts go: the shared RDM endpoint or msgEp
  FidPtr<fid_ep> msgEp;
  FidPtr<fid_pep> pep;
  FidPtr<fid_eq> eq;
  uint64_t token = 0;  // FI_EP_MSG: random, sent as connection-request / accept data
  std::vector<uint8_t> listenName;
  const char* role = "";  // FI_EP_MSG: "accept" or "connect"
  uint64_t localTag = 0;  // tag our receives match (peers send with it)
  uint64_t peerTag = 0;   // tag we send with (the peer's localTag)
  fi_addr_t addr = FI_ADDR_UNSPEC;
  std::string peerName;
  bool connected = false;        // connect() done and the Endpoint alive
  std::vector<uint32_t> txRing;  // pool indices of sends/writes/reads in post order
  uint32_t txHead = 0;
  uint32_t txCount = 0;
  uint32_t recvCount = 0;
};

void putLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t getLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

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

class OfiMemoryRegion final : public MemoryRegion {
 public:
  OfiMemoryRegion(FidPtr<fid_mr> mr, uint8_t* data, size_t size, uint64_t remoteBase)
      : mr_(std::move(mr)), data_(data), size_(size), remoteBase_(remoteBase) {}
  uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }
  RemoteRegion exportRegion() const override {
    RemoteRegion r;
    r.addr = remoteBase_;
    r.length = size_;
    r.key.resize(8);
    putLe(r.key.data(), fi_mr_key(mr_.get()), 8);
    return r;
  }
  void* desc() const { return fi_mr_desc(mr_.get()); }

 private:
  FidPtr<fid_mr> mr_;
  uint8_t* data_;
  size_t size_;
  uint64_t remoteBase_;  // virtual address (FI_MR_VIRT_ADDR) or 0 (offsets)
};

class OfiDevice final : public Device {
 public:
  OfiDevice(const DeviceOptions& options, const Tuning& tuning);
  ~OfiDevice() override;

  std::string backend() const override { return "ofi"; }
  std::string name() const override { return domainName_; }
  Caps caps() const override { return caps_; }
  nlohmann::json properties() const override;
  std::unique_ptr<MemoryRegion> registerMemory(void* ptr, size_t bytes) override;
  std::unique_ptr<Connector> createConnector() override;
  size_t poll(Completion* out, size_t max) override;

  // Used by OfiConnector / OfiEndpoint.
  std::vector<uint8_t> localAddress(uint32_t conn) const;
  void connect(uint32_t conn, const std::vector<uint8_t>& remote);
  void connectMsg(uint32_t conn, const std::vector<uint8_t>& remote, const Deadline& deadline);
  bool msg() const { return sel_.msg; }
  void closeConnection(uint32_t conn);
  PostResult postSend(uint32_t conn, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context, bool signaled);
  PostResult postRecv(uint32_t conn, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                      uint64_t context);
  PostResult postRma(uint32_t conn, OpKind op, const MemoryRegion& mr, uint64_t offset,
                     uint32_t length, const RemoteRegion& remote, uint64_t remoteOffset,
                     uint64_t context, bool signaled);
  const ConnState& conn(uint32_t i) const { return *conns_[i]; }

 private:
  void drainForClose() noexcept;
  void initPool(uint32_t poolSize);
  void initCaps();
  void openMsgConnector(ConnState& c);
  FidPtr<fid_ep> openMsgEndpoint(ConnState& c, fi_info* info);
  uint32_t waitCmEvent(ConnState& c, fid_t from, uint32_t want, fi_eq_cm_entry* entry,
                       uint8_t* data, size_t* dataLen, const Deadline& deadline);
  [[noreturn]] void fail(const char* call, int64_t rc) const;
  void check(const char* call, int64_t rc) const {
    if (rc != 0) fail(call, rc);
  }
  std::string addressString(const void* name) const;
  void checkRange(const char* op, const MemoryRegion& mr, uint64_t offset, uint32_t length);
  uint32_t allocate(uint32_t conn, OpKind op, uint64_t user, uint32_t bytes, bool signaled);
  void release(uint32_t idx);
  void pushReady(uint32_t idx);
  void drainTx(ConnState& c);
  void finish(uint32_t idx, uint64_t len, int status);
  void readError();
  void progress();
  // progress() for one CQ format (fi_cq_tagged_entry for RDM, fi_cq_msg_entry for MSG).
  template <class Entry>
  void progressAs();
  uint32_t indexOf(void* opContext) const;
  PostResult retry() {
    progress();
    return PostResult::kRetry;
  }

  Selection sel_;
  std::string label_;  // "provider 'tcp;ofi_rxm' domain 'lo'" for messages
  std::string domainName_;
  bool mrLocal_ = false;
  bool mrVirtAddr_ = false;
  bool mrProvKey_ = false;
  bool mrEndpoint_ = false;
  uint64_t injectLimit_ = 0;
  uint64_t maxMessage_ = 0;
  uint32_t txDepth_ = 0;
  uint32_t rxDepth_ = 0;
  Caps caps_;
  uint64_t nextKey_ = 1;
  uint64_t deviceId_ = 0;  // FI_EP_MSG: random; the smaller id of a pair accepts
  bool posted_ = false;    // anything was posted (teardown then drains the CQ first)  //
                           // requested_key when the provider does not choose keys

  // Declared in creation order; destroyed in reverse: ep, CQ, AV, domain, fabric (MRs are
  // owned by the caller and must be gone before the device).
  FidPtr<fid_fabric> fabric_;
  FidPtr<fid_domain> domain_;
  FidPtr<fid_av> av_;
  FidPtr<fid_cq> cq_;
  FidPtr<fid_ep> ep_;
  std::vector<uint8_t> epName_;

  std::vector<OpContext> pool_;
  std::vector<std::string> errors_;  // per pool slot, filled only on error completions
  uint32_t freeHead_ = 0;
  uint32_t freeCount_ = 0;
  std::vector<uint32_t> ready_;  // completed slots waiting for poll(), in report order
  uint32_t readyHead_ = 0;
  uint32_t readyCount_ = 0;

  std::vector<std::unique_ptr<ConnState>> conns_;
  std::mt19937_64 rng_{std::random_device{}()};
  std::map<std::string, fi_addr_t> avByName_;
};

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
  std::string peerName() const override { return dev_.conn(conn_).peerName; }
  nlohmann::json properties() const override {
    const ConnState& c = dev_.conn(conn_);
    if (dev_.msg()) return {{"peer", c.peerName}, {"endpoint_type", "FI_EP_MSG"}, {"role", c.role}};
    return {{"peer", c.peerName},
            {"fi_addr", c.addr},
            {"connection_tag", c.localTag},
            {"peer_connection_tag", c.peerTag}};
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
  deviceId_ = rng_();

  const uint32_t poolSize = txDepth_ + rxDepth_ + 64;
  fi_cq_attr cqAttr{};
  // verbs FI_EP_MSG offers no tagged CQ format (fi_cq_open: ENOSYS); MSG needs no tags.
  cqAttr.format = sel_.msg ? FI_CQ_FORMAT_MSG : FI_CQ_FORMAT_TAGGED;
  cqAttr.size = poolSize;
  cqAttr.wait_obj = FI_WAIT_NONE;
  fid_cq* cq = nullptr;
  check("fi_cq_open", fi_cq_open(domain_.get(), &cqAttr, &cq, nullptr));
  cq_.reset(cq);

  initPool(poolSize);
  initCaps();
  if (sel_.msg) return;  // FI_EP_MSG: endpoints are opened per connection

  int rc = 0;
  fid_ep* ep = nullptr;
  check("fi_endpoint(FI_EP_RDM)", fi_endpoint(domain_.get(), info, &ep, nullptr));
  ep_.reset(ep);
  check("fi_ep_bind(av)", fi_ep_bind(ep_.get(), &av_->fid, 0));
  check("fi_ep_bind(cq, FI_TRANSMIT|FI_RECV)",
        fi_ep_bind(ep_.get(), &cq_->fid, FI_TRANSMIT | FI_RECV));
  rc = fi_enable(ep_.get());
  if (rc == -FI_EINVAL && label_.find("ofi_rxm") != std::string::npos)
    throw TransportError(fmt::format(
        "fi_enable on {}: {}; ofi_rxm opens its core CQ with FI_UNIVERSE_SIZE (default 256) x "
        "(FI_OFI_RXM_MSG_TX_SIZE + FI_OFI_RXM_MSG_RX_SIZE) entries, more than small devices "
        "allow (soft-RoCE: 32767): set FI_UNIVERSE_SIZE=64",
        label_, fiError(rc)));
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

void OfiDevice::initPool(uint32_t poolSize) {
  pool_.resize(poolSize);
  errors_.resize(poolSize);
  ready_.resize(poolSize);
  for (uint32_t i = 0; i < poolSize; ++i) {
    pool_[i] = OpContext{};
    pool_[i].nextFree = i + 1;
    pool_[i].state = SlotState::kFree;
  }
  freeHead_ = 0;
  freeCount_ = poolSize;
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

void OfiDevice::drainForClose() noexcept {
  // ofi_rxm over verbs still has protocol work queued after the last user completion (SAR
  // acknowledgements); closing the endpoint before it has run crashed libfabric 1.17 inside
  // fi_close(ep). Progress the CQ until it has been quiet for kDrainQuietMs (at most
  // kDrainMaxMs), dropping whatever completes: the device is going away.
  if (!cq_ || !posted_) return;
  fi_cq_tagged_entry entries[kCqBatch];  // also large enough for kCqBatch fi_cq_msg_entry
  const Deadline hard(kDrainMaxMs);
  int64_t quietSince = nowNs();
  while (!hard.expired() && nowNs() - quietSince < kDrainQuietMs * 1'000'000) {
    const ssize_t got = fi_cq_read(cq_.get(), entries, kCqBatch);
    if (got == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(cq_.get(), &err, 0) < 0) return;
    } else if (got <= 0) {
      if (got != -FI_EAGAIN) return;
      continue;
    }
    quietSince = nowNs();
  }
}

void OfiDevice::fail(const char* call, int64_t rc) const {
  throw TransportError(fmt::format("{} on {}: {}", call, label_, fiError(rc)));
}

std::string OfiDevice::addressString(const void* name) const {
  if (!av_) {
    // FI_EP_MSG has no AV to print with: format the IP formats ourselves.
    char ip[INET6_ADDRSTRLEN] = "";
    if (sel_.info->addr_format == FI_SOCKADDR_IN) {
      sockaddr_in a;
      std::memcpy(&a, name, sizeof(a));
      inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
      return fmt::format("{}:{}", ip, ntohs(a.sin_port));
    }
    if (sel_.info->addr_format == FI_SOCKADDR_IN6) {
      sockaddr_in6 a;
      std::memcpy(&a, name, sizeof(a));
      inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof(ip));
      return fmt::format("[{}]:{}", ip, ntohs(a.sin6_port));
    }
    return fmt::format("(address format {})", sel_.info->addr_format);
  }
  char buf[128];
  size_t len = sizeof(buf);
  const char* s = fi_av_straddr(av_.get(), name, buf, &len);
  return s ? std::string(s) : std::string("(unprintable address)");
}

nlohmann::json OfiDevice::properties() const {
  const fi_info* info = sel_.info.get();
  return {
      {"provider", info->fabric_attr->prov_name},
      {"fabric", info->fabric_attr->name ? info->fabric_attr->name : ""},
      {"domain", domainName_},
      {"endpoint_type", sel_.msg ? "FI_EP_MSG" : "FI_EP_RDM"},
      {"local_address", sel_.msg ? std::string("per connection (passive endpoint each)")
                                 : addressString(epName_.data())},
      {"inject_size", info->tx_attr->inject_size},
      {"inject_used_up_to", injectLimit_},
      {"max_msg_size", info->ep_attr->max_msg_size},
      {"max_msg_size_used", maxMessage_},
      {"mr_mode", mrModeNames(static_cast<uint64_t>(info->domain_attr->mr_mode))},
      {"mode", modeNames(info->mode)},
      {"rma", sel_.rmaGranted},
      {"tx_size", info->tx_attr->size},
      {"rx_size", info->rx_attr->size},
      {"tx_depth", txDepth_},
      {"rx_depth", rxDepth_},
      {"threading", threadingName(info->domain_attr->threading)},
      {"data_progress", progressName(info->domain_attr->data_progress)},
      {"av_type", sel_.msg ? "none" : "FI_AV_TABLE"},
      {"matching", sel_.msg ? "one connected FI_EP_MSG endpoint per connection"
                            : "FI_TAGGED, one 64-bit tag per connection"},
      {"protocol", protocolThresholds(*info)},
  };
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
    throw TransportError(
        fmt::format("fi_mr_reg of {} B at {} on {}: {}", bytes, ptr, label_, fiError(rc)));
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
  c->txRing.resize(txDepth_);
  c->ep = ep_.get();
  if (sel_.msg) openMsgConnector(*c);
  conns_.push_back(std::move(c));
  return std::make_unique<OfiConnector>(*this, static_cast<uint32_t>(conns_.size() - 1));
}

std::vector<uint8_t> OfiDevice::localAddress(uint32_t conn) const {
  if (sel_.msg) {
    const ConnState& c = *conns_[conn];
    std::vector<uint8_t> out(kMsgAddressHeader + c.listenName.size());
    putLe(out.data(), kAddressMagic, 4);
    out[4] = kAddressVersion;
    out[5] = kTypeMsg;
    putLe(out.data() + 6, c.listenName.size(), 2);
    putLe(out.data() + 8, deviceId_, 8);
    putLe(out.data() + 16, sel_.info->addr_format, 4);
    putLe(out.data() + 20, c.token, 8);
    std::copy(c.listenName.begin(), c.listenName.end(), out.begin() + kMsgAddressHeader);
    return out;
  }
  std::vector<uint8_t> out(kAddressHeader + epName_.size());
  putLe(out.data(), kAddressMagic, 4);
  out[4] = kAddressVersion;
  out[5] = 0;
  putLe(out.data() + 6, epName_.size(), 2);
  putLe(out.data() + 8, conns_[conn]->localTag, 8);
  putLe(out.data() + 16, sel_.info->addr_format, 4);
  std::copy(epName_.begin(), epName_.end(), out.begin() + kAddressHeader);
  return out;
}

void OfiDevice::connect(uint32_t conn, const std::vector<uint8_t>& remote) {
  if (remote.size() < kAddressHeader || getLe(remote.data(), 4) != kAddressMagic ||
      remote[4] != kAddressVersion || remote[5] != 0 ||
      remote.size() != kAddressHeader + getLe(remote.data() + 6, 2))
    throw ProtocolError(fmt::format(
        "ofi connect on {}: malformed peer address ({} B; not from an rdmabench ofi device of "
        "this version)",
        label_, remote.size()));
  const auto format = static_cast<uint32_t>(getLe(remote.data() + 16, 4));
  if (format != sel_.info->addr_format)
    throw TransportError(fmt::format(
        "ofi connect on {}: peer address format {} differs from ours ({}); both sides must use "
        "the same provider",
        label_, format, sel_.info->addr_format));
  const void* name = remote.data() + kAddressHeader;
  const std::string key(remote.begin() + kAddressHeader, remote.end());
  ConnState& c = *conns_[conn];
  c.peerName = addressString(name);
  auto it = avByName_.find(key);
  if (it == avByName_.end()) {
    fi_addr_t addr = FI_ADDR_UNSPEC;
    int rc = fi_av_insert(av_.get(), name, 1, &addr, 0, nullptr);
    if (rc != 1)
      throw TransportError(
          fmt::format("fi_av_insert of peer {} on {}: returned {} instead of 1 ({})", c.peerName,
                      label_, rc, rc < 0 ? fiError(rc) : std::string("address rejected")));
    it = avByName_.emplace(key, addr).first;
  }
  c.addr = it->second;
  c.peerTag = getLe(remote.data() + 8, 8);
  c.connected = true;
}

void OfiDevice::openMsgConnector(ConnState& c) {
  c.token = rng_();
  fi_eq_attr eqAttr{};
  eqAttr.size = 16;
  eqAttr.wait_obj = FI_WAIT_UNSPEC;  // fi_eq_sread sleeps instead of spinning
  fid_eq* eq = nullptr;
  check("fi_eq_open", fi_eq_open(fabric_.get(), &eqAttr, &eq, nullptr));
  c.eq.reset(eq);
  fid_pep* pep = nullptr;
  check("fi_passive_ep", fi_passive_ep(fabric_.get(), sel_.info.get(), &pep, nullptr));
  c.pep.reset(pep);
  check("fi_pep_bind(eq)", fi_pep_bind(c.pep.get(), &c.eq->fid, 0));
  check("fi_listen", fi_listen(c.pep.get()));
  c.listenName.resize(kMaxAddressBytes - kMsgAddressHeader);
  size_t len = c.listenName.size();
  const int rc = fi_getname(&c.pep->fid, c.listenName.data(), &len);
  if (rc == -FI_ETOOSMALL)
    throw TransportError(fmt::format(
        "fi_getname(passive endpoint) on {}: name of {} B exceeds the {} B that fit in a {} B "
        "transport address",
        label_, len, c.listenName.size(), kMaxAddressBytes));
  check("fi_getname(passive endpoint)", rc);
  c.listenName.resize(len);
}

FidPtr<fid_ep> OfiDevice::openMsgEndpoint(ConnState& c, fi_info* info) {
  fid_ep* raw = nullptr;
  check("fi_endpoint(FI_EP_MSG)", fi_endpoint(domain_.get(), info, &raw, nullptr));
  FidPtr<fid_ep> ep(raw);
  check("fi_ep_bind(eq)", fi_ep_bind(ep.get(), &c.eq->fid, 0));
  check("fi_ep_bind(cq, FI_TRANSMIT|FI_RECV)",
        fi_ep_bind(ep.get(), &cq_->fid, FI_TRANSMIT | FI_RECV));
  check("fi_enable(FI_EP_MSG)", fi_enable(ep.get()));
  return ep;
}

// Waits on the connector's EQ for event `want` from `from`; other events of that EQ are errors
// (it serves this one connection only). Returns the event; `data` receives the CM payload.
uint32_t OfiDevice::waitCmEvent(ConnState& c, fid_t from, uint32_t want, fi_eq_cm_entry* entry,
                                uint8_t* data, size_t* dataLen, const Deadline& deadline) {
  const char* wantName = want == FI_CONNREQ ? "FI_CONNREQ" : "FI_CONNECTED";
  alignas(fi_eq_cm_entry) uint8_t buf[sizeof(fi_eq_cm_entry) + 256];
  for (;;) {
    throwIfInterrupted("ofi connect (FI_EP_MSG)");
    const int slice = deadline.remainingMs() < 0 ? kEqWaitSliceMs
                                                 : std::min(kEqWaitSliceMs, deadline.remainingMs());
    uint32_t event = 0;
    const ssize_t rc = fi_eq_sread(c.eq.get(), &event, buf, sizeof(buf), slice, 0);
    if (rc == -FI_EAVAIL) {
      fi_eq_err_entry err{};
      const ssize_t erc = fi_eq_readerr(c.eq.get(), &err, 0);
      if (erc < 0) fail("fi_eq_readerr", erc);
      char text[256] = "";
      const char* prov =
          fi_eq_strerror(c.eq.get(), err.prov_errno, err.err_data, text, sizeof(text));
      throw TransportError(fmt::format(
          "ofi connect (FI_EP_MSG, {}) to peer {} on {} waiting for {}: {} (provider: {}, "
          "prov_errno {})",
          c.role, c.peerName, label_, wantName, fi_strerror(err.err), prov ? prov : "?",
          err.prov_errno));
    }
    if (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT || rc == -FI_EINTR) {
      if (deadline.expired())
        throw TimeoutError(
            fmt::format("ofi connect (FI_EP_MSG, {}) on {}: no {} from peer {} before the deadline",
                        c.role, label_, wantName, c.peerName));
      continue;
    }
    if (rc < 0) fail("fi_eq_sread", rc);
    std::memcpy(entry, buf, sizeof(fi_eq_cm_entry));
    if (event == FI_SHUTDOWN)
      throw TransportError(fmt::format(
          "ofi connect (FI_EP_MSG, {}) to peer {} on {}: FI_SHUTDOWN while waiting for {}", c.role,
          c.peerName, label_, wantName));
    if (event != want || (from && entry->fid != from)) {
      if (event == FI_CONNREQ) fi_freeinfo(entry->info);
      throw TransportError(fmt::format(
          "ofi connect (FI_EP_MSG, {}) to peer {} on {}: unexpected EQ event {} while waiting "
          "for {}",
          c.role, c.peerName, label_, event, wantName));
    }
    const size_t got = static_cast<size_t>(rc) > sizeof(fi_eq_cm_entry)
                           ? static_cast<size_t>(rc) - sizeof(fi_eq_cm_entry)
                           : 0;
    *dataLen = std::min(got, *dataLen);
    std::memcpy(data, buf + sizeof(fi_eq_cm_entry), *dataLen);
    return event;
  }
}

void OfiDevice::connectMsg(uint32_t conn, const std::vector<uint8_t>& remote,
                           const Deadline& deadline) {
  if (remote.size() < kMsgAddressHeader || getLe(remote.data(), 4) != kAddressMagic ||
      remote[4] != kAddressVersion || remote[5] != kTypeMsg ||
      remote.size() != kMsgAddressHeader + getLe(remote.data() + 6, 2))
    throw ProtocolError(fmt::format(
        "ofi connect (FI_EP_MSG) on {}: malformed peer address ({} B; not from an rdmabench ofi "
        "device with --ep msg of this version)",
        label_, remote.size()));
  const auto format = static_cast<uint32_t>(getLe(remote.data() + 16, 4));
  if (format != sel_.info->addr_format)
    throw TransportError(fmt::format(
        "ofi connect (FI_EP_MSG) on {}: peer address format {} differs from ours ({}); both "
        "sides must use the same provider",
        label_, format, sel_.info->addr_format));
  ConnState& c = *conns_[conn];
  const uint64_t peerId = getLe(remote.data() + 8, 8);
  const uint64_t peerToken = getLe(remote.data() + 20, 8);
  const uint8_t* name = remote.data() + kMsgAddressHeader;
  c.peerName = addressString(name);
  // Deterministic roles (as the socket backend): the smaller (device id, token) accepts, the
  // larger connects, so two sides never both wait for a request.
  const bool accepting = deviceId_ != peerId ? deviceId_ < peerId : c.token < peerToken;
  c.role = accepting ? "accept" : "connect";
  fi_eq_cm_entry entry{};
  uint8_t data[kCmDataBytes];
  uint8_t mine[kCmDataBytes];
  putLe(mine, c.token, 8);
  if (accepting) {
    for (;;) {
      size_t len = sizeof(data);
      waitCmEvent(c, &c.pep->fid, FI_CONNREQ, &entry, data, &len, deadline);
      InfoPtr info(entry.info);
      if (len == kCmDataBytes && getLe(data, 8) == peerToken) {
        c.msgEp = openMsgEndpoint(c, info.get());
        check("fi_accept", fi_accept(c.msgEp.get(), mine, sizeof(mine)));
        break;
      }
      // A request from someone else (stale client, port scanner): refuse it, keep waiting.
      fi_reject(c.pep.get(), info->handle, nullptr, 0);
    }
  } else {
    // verbs resolves the route when the endpoint is created: give it the peer as dest_addr.
    InfoPtr info(fi_dupinfo(sel_.info.get()));
    if (!info) throw TransportError("fi_dupinfo: out of memory");
    const size_t nameLen = remote.size() - kMsgAddressHeader;
    free(info->dest_addr);
    info->dest_addr = malloc(nameLen);
    if (!info->dest_addr) throw TransportError("malloc of dest_addr: out of memory");
    std::memcpy(info->dest_addr, name, nameLen);
    info->dest_addrlen = nameLen;
    c.msgEp = openMsgEndpoint(c, info.get());
    const int rc = fi_connect(c.msgEp.get(), name, mine, sizeof(mine));
    if (rc != 0)
      throw TransportError(
          fmt::format("fi_connect to peer {} on {}: {}", c.peerName, label_, fiError(rc)));
  }
  size_t len = sizeof(data);
  waitCmEvent(c, &c.msgEp->fid, FI_CONNECTED, &entry, data, &len, deadline);
  if (!accepting && len == kCmDataBytes && getLe(data, 8) != peerToken)
    throw ProtocolError(fmt::format(
        "ofi connect (FI_EP_MSG) on {}: peer {} accepted with token {:#x}, expected {:#x}", label_,
        c.peerName, getLe(data, 8), peerToken));
  c.pep.reset();
  c.ep = c.msgEp.get();
  c.connected = true;
}

void OfiDevice::closeConnection(uint32_t conn) {
  ConnState& c = *conns_[conn];
  c.connected = false;
  if (sel_.msg) {
    // Own endpoint: cancel its receives, let the CQ deliver the sends/writes/reads in flight,
    // close it, then drain again: verbs flushes the receives it still holds into the shared
    // CQ when the QP is destroyed, and such a late completion must not hit a reused slot.
    // Completions are dropped in poll() as the connection is closed; slots that never
    // complete (tcp drops them silently) are freed at the end.
    if (!c.msgEp) return;
    for (auto& o : pool_)
      if (o.state == SlotState::kPosted && o.conn == conn && o.op == OpKind::kRecv)
        fi_cancel(&c.msgEp->fid, &o);
    auto drain = [&](bool withRecvs) {
      const Deadline hard(kDrainMaxMs);
      auto pending = [&] {
        for (const auto& o : pool_)
          if (o.state == SlotState::kPosted && o.conn == conn &&
              (withRecvs || o.op != OpKind::kRecv))
            return true;
        return false;
      };
      try {
        while (pending() && !hard.expired())
          progress();
      } catch (const Error&) {
        // Closing anyway; errors of a dying connection are not reported.
      }
    };
    drain(false);
    fi_shutdown(c.msgEp.get(), 0);
    c.msgEp.reset();
    c.eq.reset();
    c.ep = nullptr;
    drain(true);
    for (uint32_t i = 0; i < pool_.size(); ++i)
      if ((pool_[i].state == SlotState::kPosted || pool_[i].state == SlotState::kDone) &&
          pool_[i].conn == conn)
        release(i);
    c.txCount = 0;
    c.recvCount = 0;
    return;
  }
  // Receives still posted would stay matchable forever on the shared endpoint: cancel them
  // (their FI_ECANCELED completions are dropped in finish()/poll()).
  for (auto& o : pool_)
    if (o.state == SlotState::kPosted && o.op == OpKind::kRecv && o.conn == conn)
      fi_cancel(&ep_->fid, &o);
}

void OfiDevice::checkRange(const char* op, const MemoryRegion& mr, uint64_t offset,
                           uint32_t length) {
  posted_ = true;
  if (offset > mr.size() || length > mr.size() - offset)
    throw UsageError(
        fmt::format("{} on {}: range [{}, {}+{}) outside the registered region of "
                    "{} B",
                    op, label_, offset, offset, length, mr.size()));
  if (length > maxMessage_)
    throw UsageError(fmt::format("{} on {}: message of {} B exceeds max_msg_size {} B", op, label_,
                                 length, maxMessage_));
}

uint32_t OfiDevice::allocate(uint32_t conn, OpKind op, uint64_t user, uint32_t bytes,
                             bool signaled) {
  const uint32_t idx = freeHead_;
  OpContext& o = pool_[idx];
  freeHead_ = o.nextFree;
  --freeCount_;
  o.user = user;
  o.bytes = bytes;
  o.conn = conn;
  o.status = 0;
  o.op = op;
  o.state = SlotState::kPosted;
  o.signaled = signaled;
  return idx;
}

void OfiDevice::release(uint32_t idx) {
  OpContext& o = pool_[idx];
  o.state = SlotState::kFree;
  o.nextFree = freeHead_;
  freeHead_ = idx;
  ++freeCount_;
}

void OfiDevice::pushReady(uint32_t idx) {
  pool_[idx].state = SlotState::kReady;
  ready_[(readyHead_ + readyCount_) % ready_.size()] = idx;
  ++readyCount_;
}

void OfiDevice::drainTx(ConnState& c) {
  while (c.txCount != 0) {
    const uint32_t idx = c.txRing[c.txHead];
    if (pool_[idx].state != SlotState::kDone) break;
    c.txHead = (c.txHead + 1) % txDepth_;
    --c.txCount;
    pushReady(idx);
  }
}

void OfiDevice::finish(uint32_t idx, uint64_t len, int status) {
  OpContext& o = pool_[idx];
  ConnState& c = *conns_[o.conn];
  o.status = status;
  if (o.op == OpKind::kRecv) {
    if (status == 0) o.bytes = static_cast<uint32_t>(len);
    --c.recvCount;
    pushReady(idx);
  } else {
    o.state = SlotState::kDone;
    drainTx(c);
  }
}

uint32_t OfiDevice::indexOf(void* opContext) const {
  auto* o = static_cast<OpContext*>(opContext);
  if (o < pool_.data() || o >= pool_.data() + pool_.size()) return UINT32_MAX;
  return static_cast<uint32_t>(o - pool_.data());
}

void OfiDevice::readError() {
  fi_cq_err_entry err{};
  ssize_t rc = fi_cq_readerr(cq_.get(), &err, 0);
  if (rc == -FI_EAGAIN) return;
  if (rc < 0) fail("fi_cq_readerr", rc);
  char buf[256] = "";
  const char* provText = fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, buf, sizeof(buf));
  const uint32_t idx = indexOf(err.op_context);
  if (idx == UINT32_MAX)
    throw TransportError(
        fmt::format("fi_cq_readerr on {}: error without operation context: {} "
                    "(provider: {})",
                    label_, fi_strerror(err.err), provText ? provText : "?"));
  const OpContext& o = pool_[idx];
  const ConnState& c = *conns_[o.conn];
  std::string extra = err.err == FI_ETRUNC ? fmt::format(", {} B did not fit", err.olen) : "";
  errors_[idx] = fmt::format(
      "{} of {} B with peer {} (connection tag {}) on {}: {}{} (provider: {}, prov_errno {})",
      toString(o.op), o.bytes, c.peerName, c.localTag, label_, fi_strerror(err.err), extra,
      provText ? provText : "?", err.prov_errno);
  finish(idx, err.len, err.err != 0 ? err.err : -1);
}

void OfiDevice::progress() {
  if (sel_.msg)
    progressAs<fi_cq_msg_entry>();
  else
    progressAs<fi_cq_tagged_entry>();
}

template <class Entry>
void OfiDevice::progressAs() {
  Entry entries[kCqBatch];
  for (int round = 0; round < kCqReadsPerPoll; ++round) {
    const ssize_t got = fi_cq_read(cq_.get(), entries, kCqBatch);
    if (got > 0) {
      for (ssize_t i = 0; i < got; ++i) {
        const uint32_t idx = indexOf(entries[i].op_context);
        if (idx != UINT32_MAX) finish(idx, entries[i].len, 0);
      }
      if (static_cast<size_t>(got) < kCqBatch) return;
      continue;
    }
    if (got == -FI_EAGAIN) return;
    if (got == -FI_EAVAIL) {
      readError();
      continue;
    }
    fail("fi_cq_read", got);
  }
}

size_t OfiDevice::poll(Completion* out, size_t max) {
  progress();
  size_t n = 0;
  while (n < max && readyCount_ != 0) {
    const uint32_t idx = ready_[readyHead_];
    readyHead_ = (readyHead_ + 1) % ready_.size();
    --readyCount_;
    const OpContext& o = pool_[idx];
    if (conns_[o.conn]->connected && (o.signaled || o.status != 0)) {
      Completion& d = out[n++];
      d.context = o.user;
      d.op = o.op;
      d.bytes = o.bytes;
      d.status = o.status;
      if (o.status != 0)
        d.error = std::move(errors_[idx]);
      else
        d.error.clear();
    }
    release(idx);
  }
  return n;
}

PostResult OfiDevice::postSend(uint32_t conn, const MemoryRegion& mr, uint64_t offset,
                               uint32_t length, uint64_t context, bool signaled) {
  checkRange("postSend", mr, offset, length);
  ConnState& c = *conns_[conn];
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  void* buf = omr.data() + offset;
  const bool full = freeCount_ == 0 || c.txCount == txDepth_;
  if (length <= injectLimit_) {
    // Injected: the buffer is free at once and libfabric reports no completion, so a
    // signaled inject gets a slot that is already done (kept in post order by drainTx).
    if (signaled && full) return retry();
    ssize_t rc = sel_.msg ? fi_inject(c.ep, buf, length, 0)
                          : fi_tinject(c.ep, buf, length, c.addr, c.peerTag);
    if (rc == -FI_EAGAIN) return retry();
    if (rc != 0)
      throw TransportError(fmt::format("{} of {} B to {} on {}: {}",
                                       sel_.msg ? "fi_inject" : "fi_tinject", length, c.peerName,
                                       label_, fiError(rc)));
    if (signaled) {
      const uint32_t idx = allocate(conn, OpKind::kSend, context, length, true);
      pool_[idx].state = SlotState::kDone;
      c.txRing[(c.txHead + c.txCount) % txDepth_] = idx;
      ++c.txCount;
      drainTx(c);
    }
    return PostResult::kOk;
  }
  if (full) return retry();
  const uint32_t idx = allocate(conn, OpKind::kSend, context, length, signaled);
  ssize_t rc = sel_.msg ? fi_send(c.ep, buf, length, omr.desc(), 0, &pool_[idx])
                        : fi_tsend(c.ep, buf, length, omr.desc(), c.addr, c.peerTag, &pool_[idx]);
  if (rc != 0) {
    release(idx);
    if (rc == -FI_EAGAIN) return retry();
    throw TransportError(fmt::format("{} of {} B to {} on {}: {}",
                                     sel_.msg ? "fi_send" : "fi_tsend", length, c.peerName, label_,
                                     fiError(rc)));
  }
  c.txRing[(c.txHead + c.txCount) % txDepth_] = idx;
  ++c.txCount;
  return PostResult::kOk;
}

PostResult OfiDevice::postRecv(uint32_t conn, const MemoryRegion& mr, uint64_t offset,
                               uint32_t length, uint64_t context) {
  checkRange("postRecv", mr, offset, length);
  ConnState& c = *conns_[conn];
  if (freeCount_ == 0 || c.recvCount == rxDepth_) return retry();
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  const uint32_t idx = allocate(conn, OpKind::kRecv, context, length, true);
  // Tag = our connection id, ignore = 0: matches only what this connection's peer sent us.
  // FI_EP_MSG: the endpoint is the connection.
  void* buf = omr.data() + offset;
  ssize_t rc = sel_.msg ? fi_recv(c.ep, buf, length, omr.desc(), 0, &pool_[idx])
                        : fi_trecv(c.ep, buf, length, omr.desc(), FI_ADDR_UNSPEC, c.localTag, 0,
                                   &pool_[idx]);
  if (rc != 0) {
    release(idx);
    if (rc == -FI_EAGAIN) return retry();
    throw TransportError(fmt::format("{} of {} B from {} on {}: {}",
                                     sel_.msg ? "fi_recv" : "fi_trecv", length, c.peerName, label_,
                                     fiError(rc)));
  }
  ++c.recvCount;
  return PostResult::kOk;
}

PostResult OfiDevice::postRma(uint32_t conn, OpKind op, const MemoryRegion& mr, uint64_t offset,
                              uint32_t length, const RemoteRegion& remote, uint64_t remoteOffset,
                              uint64_t context, bool signaled) {
  const char* name = op == OpKind::kWrite ? "postWrite" : "postRead";
  if (!sel_.rmaGranted)
    throw TransportError(fmt::format("{} on {}: provider did not grant FI_RMA", name, label_));
  checkRange(name, mr, offset, length);
  if (remoteOffset > remote.length || length > remote.length - remoteOffset)
    throw UsageError(
        fmt::format("{} on {}: remote range [{}, {}+{}) outside the peer's region "
                    "of {} B",
                    name, label_, remoteOffset, remoteOffset, length, remote.length));
  if (remote.key.size() != 8)
    throw UsageError(fmt::format("{} on {}: remote key of {} B (libfabric keys have 8)", name,
                                 label_, remote.key.size()));
  ConnState& c = *conns_[conn];
  const auto& omr = static_cast<const OfiMemoryRegion&>(mr);
  void* buf = omr.data() + offset;
  const uint64_t key = getLe(remote.key.data(), 8);
  const uint64_t raddr = remote.addr + remoteOffset;
  const bool full = freeCount_ == 0 || c.txCount == txDepth_;
  if (op == OpKind::kWrite && length <= injectLimit_) {
    if (signaled && full) return retry();
    ssize_t rc = fi_inject_write(c.ep, buf, length, c.addr, raddr, key);
    if (rc == -FI_EAGAIN) return retry();
    if (rc != 0)
      throw TransportError(fmt::format("fi_inject_write of {} B to {} on {}: {}", length,
                                       c.peerName, label_, fiError(rc)));
    if (signaled) {
      const uint32_t idx = allocate(conn, op, context, length, true);
      pool_[idx].state = SlotState::kDone;
      c.txRing[(c.txHead + c.txCount) % txDepth_] = idx;
      ++c.txCount;
      drainTx(c);
    }
    return PostResult::kOk;
  }
  if (full) return retry();
  const uint32_t idx = allocate(conn, op, context, length, signaled);
  ssize_t rc = op == OpKind::kWrite
                   ? fi_write(c.ep, buf, length, omr.desc(), c.addr, raddr, key, &pool_[idx])
                   : fi_read(c.ep, buf, length, omr.desc(), c.addr, raddr, key, &pool_[idx]);
  if (rc != 0) {
    release(idx);
    if (rc == -FI_EAGAIN) return retry();
    throw TransportError(fmt::format("{} of {} B with {} on {}: {}",
                                     op == OpKind::kWrite ? "fi_write" : "fi_read", length,
                                     c.peerName, label_, fiError(rc)));
  }
  c.txRing[(c.txHead + c.txCount) % txDepth_] = idx;
  ++c.txCount;
  return PostResult::kOk;
}

}  // namespace

std::unique_ptr<Device> openDevice(const DeviceOptions& options, const Tuning& tuning) {
  return std::make_unique<OfiDevice>(options, tuning);
}

std::unique_ptr<Device> openDevice(const DeviceOptions& options) {
  return openDevice(options, Tuning{});
}

BackendStatus probe() {
  return probeProviders();
}

}  // namespace rdmabench::transport::ofi
