#pragma once
// Internals of the libfabric backend shared by its .cc files (not part of the transport
// boundary; only lib/transport/ofi/ and its tests include this). See ofi_device.h for the
// design and docs/transport-ofi.md for the contract.
//
// Where things live: ofi_device.cc (open, properties, registration, Endpoint/Connector),
// ofi_address.cc (address blobs, RDM peers in the AV), ofi_msg.cc (FI_EP_MSG connection
// management), ofi_cq.cc (CQ reads, poll, teardown drain), ofi_post.cc (posts),
// completion_pool.h (op contexts and post-order completion reporting), ofi_fid.h (fid RAII).

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "transport/error_texts.h"
#include "transport/ofi/completion_pool.h"
#include "transport/ofi/ofi_device.h"
#include "transport/ofi/ofi_fid.h"
#include "transport/ofi/ofi_info.h"
#include "transport/ofi/ofi_wire.h"
#include "transport/transport.h"

namespace rdmabench::transport::ofi {

// Why a server session (DeviceOptions::acceptOnly) refuses an RDM peer's endpoint name, or "":
// a sockaddr-format name must carry the IP of the control connection's peer `controlPeer`, or,
// when that peer is a loopback address, one of this host's own addresses. Names without an IP
// (shm, IB) and an empty `controlPeer` pass. Thread-safe; binds a probe socket, sends nothing.
std::string rdmPeerRefusal(const std::string& controlPeer, uint32_t format, const void* name);

constexpr int kEqWaitSliceMs = 10;        // fi_eq_sread slice (interrupt checks in between)
constexpr size_t kCmDataBytes = 8;        // connection request / accept payload: the token
constexpr size_t kCqBatch = 32;           // entries per fi_cq_read
constexpr int kCqReadsPerPoll = 4;        // fi_cq_read calls per poll() at most
constexpr uint32_t kDefaultDepth = 1024;  // queue depth when the option is 0
constexpr uint32_t kMaxDepth = 65536;     // upper bound of any queue depth we allocate
constexpr int64_t kDrainQuietMs = 20;     // teardown: CQ quiet this long before fi_close(ep)
constexpr int64_t kDrainMaxMs = 200;      // teardown: drain at most this long

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
  bool connected = false;  // connect() done and the Endpoint alive
  ConnQueues queues;       // operations in flight (send side in post order)
};

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
  // FI_MORE on all but the last operation of a batch: a hint the provider may act on; sends
  // and writes within inject_size go out one by one (fi_inject takes no flags).
  std::string postListNote(OpKind op) const override;
  DeviceInfo info() const override;
  std::unique_ptr<MemoryRegion> registerMemory(void* ptr, size_t bytes) override;
  std::unique_ptr<Connector> createConnector() override;
  size_t poll(Completion* out, size_t max) override;
  std::string errorText(const Completion& c) const override { return errors_.text(c.errorId); }
  // Event mode (DeviceOptions::useEvent()): fi_trywait on the CQ, then poll() on its wait fd
  // (FI_WAIT_FD) for up to timeoutMs. Returns at once when completions are ready or the provider
  // needs progress (fi_trywait -FI_EAGAIN). Busy mode: returns at once.
  void waitForEvent(int timeoutMs) override;

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
  // Batch path (ofi_batch.cc): prepare validates once (as the single posts would, plus the
  // remote key) and resolves address, descriptor, remote address and key; postBatch posts the
  // prefix that fits the queues with FI_MORE on all but its last op (injects take no flags) and
  // returns how many were posted (fewer: queue full or -FI_EAGAIN; progress was driven).
  PreparedOp prepare(OpKind op, const MemoryRegion& mr, uint64_t offset, uint32_t length,
                     const RemoteRegion* remote, uint64_t remoteOffset);
  uint32_t postBatch(uint32_t conn, const PreparedOp& p, const BatchPost* posts, uint32_t count);
  const ConnState& conn(uint32_t i) const { return *conns_[i]; }

 private:
  void drainForClose() noexcept;
  // Constructor steps, in order (ofi_device.cc).
  void applyLimits(const DeviceOptions& options, const Tuning& tuning);
  void openFabric();
  void openCq(uint32_t poolSize, bool useEvent);
  void openRdmEndpoint();
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
  void finish(uint32_t idx, uint64_t len, int status);
  void readError();
  void progress();
  // progress() for one CQ format (fi_cq_tagged_entry for RDM, fi_cq_msg_entry for MSG).
  template <class Entry>
  void progressAs();
  ssize_t injectOne(uint32_t conn, const PreparedOp& p, const BatchPost& b);
  ssize_t postOne(uint32_t conn, const PreparedOp& p, const BatchPost& b, uint64_t flags);
  ssize_t postMsg(const ConnState& c, const PreparedOp& p, uint64_t flags, void* ctx,
                  const char** call) const;
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
  uint64_t deviceId_ = 0;    // FI_EP_MSG: random; the smaller id of a pair accepts
  bool acceptOnly_ = false;  // DeviceOptions::acceptOnly: id 0, FI_EP_MSG never fi_connect()s
  // DeviceOptions::peerHost of an acceptOnly device: an RDM peer's IP must be this host (or, when
  // it is a loopback address, one of this host's own addresses) before fi_av_insert.
  std::string peerHost_;
  bool posted_ = false;  // anything was posted (teardown then drains the CQ first)  //
                         // requested_key when the provider does not choose keys

  // Declared in creation order; destroyed in reverse: ep, CQ, AV, domain, fabric (MRs are
  // owned by the caller and must be gone before the device).
  FidPtr<fid_fabric> fabric_;
  FidPtr<fid_domain> domain_;
  FidPtr<fid_av> av_;
  FidPtr<fid_cq> cq_;
  int waitFd_ = -1;  // the CQ's FI_WAIT_FD in event mode (owned by the provider), else -1
  FidPtr<fid_ep> ep_;
  std::vector<uint8_t> epName_;

  // One slot per operation in flight; libfabric owns each slot's fi_context2 while posted.
  CompletionPool<fi_context2> pool_;
  ErrorTexts errors_;  // texts of failed completions (errorText)

  std::vector<std::unique_ptr<ConnState>> conns_;
  std::mt19937_64 rng_{std::random_device{}()};
  std::map<std::string, fi_addr_t> avByName_;
};

}  // namespace rdmabench::transport::ofi
