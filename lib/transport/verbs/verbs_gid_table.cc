// Reading a port's GID table (ibv_query_gid_table, per-entry and sysfs fallbacks).

#include <infiniband/verbs.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "transport/verbs/verbs_core.h"

namespace rdmabench::transport::verbs {

namespace {

std::string readSysfs(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

namespace {

GidEntry fromGidEntry(const ibv_gid_entry& ge) {
  GidEntry e;
  e.index = static_cast<int>(ge.gid_index);
  std::memcpy(e.gid.data(), ge.gid.raw, 16);
  e.type = ge.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::kRoceV2
           : ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1
                                                 : GidType::kIb;
  char name[IF_NAMESIZE] = {};
  if (ge.ndev_ifindex != 0 && if_indextoname(ge.ndev_ifindex, name) != nullptr) e.netdev = name;
  return e;
}

}  // namespace

std::vector<GidEntry> readGidTable(ibv_context* ctx, int port, int tableLength) {
  std::vector<GidEntry> out;
  // One call for all valid entries of all ports (rdma-core >= 32). Querying index by index
  // costs one ioctl per entry, empty ones included: rxe has 1024 entries per port, which took
  // ~2 s per device open in the TCG VM.
  {
    ibv_device_attr da{};
    int ports = ibv_query_device(ctx, &da) == 0 ? std::max<int>(da.phys_port_cnt, 1) : 1;
    std::vector<ibv_gid_entry> all(static_cast<size_t>(tableLength) * ports);
    ssize_t n = all.empty() ? 0 : ibv_query_gid_table(ctx, all.data(), all.size(), 0);
    if (n >= 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (static_cast<int>(all[i].port_num) != port) continue;
        GidEntry e = fromGidEntry(all[i]);
        if (std::all_of(e.gid.begin(), e.gid.end(), [](uint8_t b) { return b == 0; })) continue;
        out.push_back(std::move(e));
      }
      std::sort(out.begin(), out.end(),
                [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
      return out;
    }
  }
  std::string sysPort = fmt::format("/sys/class/infiniband/{}/ports/{}/gid_attrs/",
                                    ibv_get_device_name(ctx->device), port);
  for (int i = 0; i < tableLength; ++i) {
    GidEntry e;
    e.index = i;
    ibv_gid_entry ge{};
    int rc = ibv_query_gid_ex(ctx, static_cast<uint32_t>(port), static_cast<uint32_t>(i), &ge, 0);
    if (rc == 0) {
      std::memcpy(e.gid.data(), ge.gid.raw, 16);
      e.type = ge.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::kRoceV2
               : ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::kRoceV1
                                                     : GidType::kIb;
      char name[IF_NAMESIZE] = {};
      if (ge.ndev_ifindex != 0 && if_indextoname(ge.ndev_ifindex, name) != nullptr) e.netdev = name;
    } else if (rc == EOPNOTSUPP || rc == ENOSYS) {
      ibv_gid gid{};
      if (ibv_query_gid(ctx, static_cast<uint8_t>(port), i, &gid) != 0) continue;
      std::memcpy(e.gid.data(), gid.raw, 16);
      std::string type = readSysfs(sysPort + "types/" + std::to_string(i));
      e.type = type.find("v2") != std::string::npos   ? GidType::kRoceV2
               : type.find("v1") != std::string::npos ? GidType::kRoceV1
                                                      : GidType::kIb;
      e.netdev = readSysfs(sysPort + "ndevs/" + std::to_string(i));
    } else {
      continue;  // ENODATA etc.: empty entry
    }
    if (std::all_of(e.gid.begin(), e.gid.end(), [](uint8_t b) { return b == 0; })) continue;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace rdmabench::transport::verbs
