// verbs::probe(): devices, ports and GID tables for `rdmabench info` and test skips.

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "transport/backends.h"
#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {

namespace {

// Per-lane Gb/s of ibv_port_attr::active_speed and lane count of active_width (IBTA codes).
double laneGbps(uint8_t speed) {
  switch (speed) {
    case 1:
      return 2.5;
    case 2:
      return 5.0;
    case 4:
      return 10.0;
    case 8:
      return 10.3125;  // FDR10
    case 16:
      return 14.0625;
    case 32:
      return 25.78125;
    case 64:
      return 53.125;
    case 128:
      return 106.25;
  }
  return 0;
}

int laneCount(uint8_t width) {
  switch (width) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
  }
  return 0;
}

const char* portStateName(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
  }
  return "?";
}

// Port `p`'s facts for `rdmabench info`: state, MTUs, link layer, speed and the GID table with
// the entry chosen without a route hint marked "auto" (its index in `*autoIndex`).
nlohmann::json portFacts(ibv_context* ctx, int p, const ibv_port_attr& pa, int* autoIndex) {
  nlohmann::json port;
  port["port"] = p;
  port["state"] = portStateName(pa.state);
  port["active_mtu"] = mtuToBytes(pa.active_mtu);
  port["max_mtu"] = mtuToBytes(pa.max_mtu);
  port["link_layer"] = linkLayerName(pa.link_layer);
  port["lid"] = pa.lid;
  port["max_msg_sz"] = pa.max_msg_sz;
  double gbps = laneGbps(pa.active_speed) * laneCount(pa.active_width);
  if (gbps > 0) port["speed_gbps"] = gbps;
  std::vector<GidEntry> table = readGidTable(ctx, p, pa.gid_tbl_len);
  RouteHint noHint;
  *autoIndex = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? selectGidIndex(table, noHint) : 0;
  port["gids"] = nlohmann::json::array();
  for (const GidEntry& e : table)
    port["gids"].push_back({{"index", e.index},
                            {"gid", gidToString(e.gid)},
                            {"type", toString(e.type)},
                            {"netdev", e.netdev},
                            {"auto", e.index == *autoIndex}});
  return port;
}

}  // namespace

BackendStatus probe() {
  BackendStatus s;
  s.name = "verbs";
  s.built = true;
  s.details = nlohmann::json::object();
  s.details["devices"] = nlohmann::json::array();
  int count = 0;
  errno = 0;
  DeviceListPtr list(ibv_get_device_list(&count));
  if (list == nullptr) {
    s.reason = fmt::format("no RDMA devices: ibv_get_device_list: {}{}", std::strerror(errno),
                           errno == ENOSYS ? " (this kernel has no RDMA support)" : "");
    return s;
  }
  if (count == 0) {
    s.reason = "no RDMA devices (ibv_get_device_list returned 0)";
    return s;
  }
  std::string firstActive;
  std::string problems;
  for (int d = 0; d < count; ++d) {
    nlohmann::json dev;
    std::string name = ibv_get_device_name(list.get()[d]);
    dev["name"] = name;
    ContextPtr ctx(ibv_open_device(list.get()[d]));
    if (ctx == nullptr) {
      dev["error"] = fmt::format("ibv_open_device: {}", std::strerror(errno));
      problems += fmt::format("{}{}: {}", problems.empty() ? "" : "; ", name,
                              dev["error"].get<std::string>());
      s.details["devices"].push_back(dev);
      continue;
    }
    ibv_device_attr da{};
    if (ibv_query_device(ctx.get(), &da) == 0) {
      dev["fw_ver"] = da.fw_ver;
      dev["max_qp_wr"] = da.max_qp_wr;
      dev["max_cqe"] = da.max_cqe;
      dev["max_qp_rd_atom"] = da.max_qp_rd_atom;
      dev["max_qp_init_rd_atom"] = da.max_qp_init_rd_atom;
      dev["ports"] = nlohmann::json::array();
      for (int p = 1; p <= da.phys_port_cnt; ++p) {
        ibv_port_attr pa{};
        if (ibv_query_port(ctx.get(), static_cast<uint8_t>(p), &pa) != 0) continue;
        int autoIndex = 0;
        nlohmann::json port = portFacts(ctx.get(), p, pa, &autoIndex);
        if (pa.state == IBV_PORT_ACTIVE && firstActive.empty())
          firstActive =
              fmt::format("{} port {} ACTIVE ({}, MTU {}, auto GID index {})", name, p,
                          linkLayerName(pa.link_layer), mtuToBytes(pa.active_mtu), autoIndex);
        dev["ports"].push_back(port);
      }
    }
    ctx.reset();
    s.details["devices"].push_back(dev);
  }
  list.reset();
  s.usable = !firstActive.empty();
  s.reason = s.usable ? firstActive
                      : fmt::format("no ACTIVE port on any RDMA device ({} device(s){}{})", count,
                                    problems.empty() ? "" : ": ", problems);
  return s;
}

}  // namespace rdmabench::transport::verbs
