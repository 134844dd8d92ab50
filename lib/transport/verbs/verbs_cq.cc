// The per-device Core of the verbs backend: QP creation on the shared CQ, CQ sizing, polling
// and the completion translation through the endpoints (verbs_core.h).

#include <rdma/rdma_cma.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_core.h"
#include "transport/verbs/verbs_endpoint.h"

namespace rdmabench::transport::verbs {

namespace {

constexpr int kPollBatch = 32;

}  // namespace

Core::~Core() {
  if (cq != nullptr) ibv_destroy_cq(cq);
  if (channel != nullptr) ibv_destroy_comp_channel(channel);
  if (pd != nullptr) ibv_dealloc_pd(pd);
  if (cmDevices != nullptr)
    rdma_free_devices(cmDevices);  // owns ctx
  else if (ctx != nullptr)
    ibv_close_device(ctx);
}

ibv_qp_init_attr Core::qpInitAttr(uint32_t inlineRequest) const {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
  attr.cap.max_send_wr = txDepth;
  attr.cap.max_recv_wr = rxDepth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = inlineRequest;
  return attr;
}

ibv_qp* Core::createQp(uint32_t inlineRequest, uint32_t* reportedInline) {
  ibv_qp_init_attr attr = qpInitAttr(inlineRequest);
  ibv_qp* qp = ibv_create_qp(pd, &attr);
  if (qp != nullptr && reportedInline != nullptr) *reportedInline = attr.cap.max_inline_data;
  return qp;
}

void Core::reserveCq(int qps) {
  int64_t needed = static_cast<int64_t>(qps) * (txDepth + rxDepth);
  if (needed <= cqSize) return;
  if (needed > devAttr.max_cqe)
    throw TransportError(
        fmt::format("{}: {} QPs with tx depth {} + rx depth {} need {} CQEs, above max_cqe {}",
                    name, qps, txDepth, rxDepth, needed, devAttr.max_cqe));
  int want = static_cast<int>(std::min<int64_t>(needed * 2, devAttr.max_cqe));
  int rc = ibv_resize_cq(cq, want);
  if (rc != 0)
    throw TransportError(fmt::format("ibv_resize_cq to {} CQEs on {} (for {} QPs): {}", want, name,
                                     qps, errText(rc)));
  cqSize = cq->cqe;
}

size_t Core::pollCq(Completion* out, size_t max, uint32_t skipQpn, bool skip) {
  size_t n = 0;
  ibv_wc wc[kPollBatch];
  VerbsEndpoint* last = nullptr;
  uint32_t lastQpn = 0;
  while (n < max) {
    int want = static_cast<int>(std::min<size_t>(kPollBatch, max - n));
    int got = ibv_poll_cq(cq, want, wc);
    if (got < 0) throw TransportError(fmt::format("ibv_poll_cq on {}: failed ({})", name, got));
    for (int i = 0; i < got; ++i) {
      if (skip && wc[i].qp_num == skipQpn) continue;
      if (last == nullptr || lastQpn != wc[i].qp_num) {
        auto it = endpoints.find(wc[i].qp_num);
        if (it == endpoints.end()) continue;  // QP already destroyed
        last = it->second;
        lastQpn = wc[i].qp_num;
      }
      if (last->translate(wc[i], out[n])) ++n;
    }
    if (got < want) break;
  }
  return n;
}

void Core::drainToPending(uint32_t skipQpn, bool skip) {
  Completion buf[kPollBatch];
  for (;;) {
    size_t got = pollCq(buf, kPollBatch, skipQpn, skip);
    for (size_t i = 0; i < got; ++i)
      pending.push_back(std::move(buf[i]));
    if (got < static_cast<size_t>(kPollBatch)) break;  // pollCq stops only on an empty CQ
  }
}

int mtuToBytes(ibv_mtu mtu) {
  return 128 << static_cast<int>(mtu);
}

const char* linkLayerName(uint8_t linkLayer) {
  switch (linkLayer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

}  // namespace rdmabench::transport::verbs
