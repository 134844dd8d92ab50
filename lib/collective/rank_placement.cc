#include "collective/rank_placement.h"

#include <hwloc.h>

#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"

namespace rdmabench::collective {

using nlohmann::json;

PlacementFacts placeRank(Communicator& c, const PlacementRequest& request,
                         const launch::RankInfo& info) {
  bool shared = false;
  PlacementRequest mine = rankPlacement(request, info.localRank, info.localRanks, &shared);
  PlacementFacts f = applyPlacement(mine, c.device().name());
  if (mine.cpus != request.cpus)
    f.source =
        fmt::format("bound to CPU {} of --cpu {} (local rank {} of {}{})", mine.cpus, request.cpus,
                    info.localRank, info.localRanks, shared ? ", more ranks than CPUs" : "");
  c.store().set(fmt::format("place/{}", c.rank()),
                json{{"host", info.host}, {"facts", f.toJson()}}.dump());
  return f;
}

std::string sharedCpuWarning(const std::vector<RankCpus>& ranks) {
  struct HostCpus {
    std::vector<int> ranks;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
    std::map<std::string, std::vector<int>> single;  // one-CPU binding -> its ranks
  };
  std::map<std::string, HostCpus> hosts;
  hwloc_bitmap_t one = hwloc_bitmap_alloc();
  for (const RankCpus& r : ranks) {
    HostCpus& h = hosts[r.host];
    h.ranks.push_back(r.rank);
    if (r.cpus.empty() || hwloc_bitmap_list_sscanf(one, r.cpus.c_str()) != 0) continue;
    hwloc_bitmap_or(h.cpus, h.cpus, one);
    if (hwloc_bitmap_weight(one) == 1) h.single[r.cpus].push_back(r.rank);
  }
  hwloc_bitmap_free(one);
  auto list = [](const std::vector<int>& v) {
    std::string s;
    for (int x : v)
      s += fmt::format("{}{}", s.empty() ? "" : ", ", x);
    return s;
  };
  std::string w;
  for (auto& [host, h] : hosts) {
    const int cpus = hwloc_bitmap_weight(h.cpus);
    if (cpus > 0 && h.ranks.size() > static_cast<size_t>(cpus)) {
      char* text = nullptr;
      hwloc_bitmap_list_asprintf(&text, h.cpus);
      w += fmt::format("{}{} ranks on {} run on {} CPU{} ({})", w.empty() ? "" : "; ",
                       h.ranks.size(), host, cpus, cpus == 1 ? "" : "s", text ? text : "?");
      std::free(text);
    } else {
      for (const auto& [cpu, on] : h.single)
        if (on.size() > 1)
          w += fmt::format("{}ranks {} on {} share CPU {}", w.empty() ? "" : "; ", list(on), host,
                           cpu);
    }
    hwloc_bitmap_free(h.cpus);
  }
  return w;
}

PlacementFacts gatherPlacement(Communicator& c, const PlacementFacts& own, int64_t timeoutMs) {
  PlacementFacts out = own;
  out.ranks.clear();
  std::vector<RankCpus> all;
  std::vector<std::string> warnings;
  if (!own.warning.empty()) warnings.push_back("rank 0: " + own.warning);
  for (int r = 0; r < c.size(); ++r) {
    const std::string what = fmt::format("placement of rank {}", r);
    json j = parseUntrustedJson(c.store().get(fmt::format("place/{}", r), timeoutMs), what);
    if (!j.is_object() || !jsonObject(j, "facts", what))
      throw ProtocolError(fmt::format("malformed {}", what));
    const json& f = *jsonObject(j, "facts", what);
    RankCpus rc{r, jsonString(j, "host", what, {}, 256), jsonString(f, "cpus", what, {}, 4096)};
    out.ranks.push_back({r, rc.host, rc.cpus, jsonString(f, "source", what)});
    if (r > 0)
      if (std::string w = jsonString(f, "warning", what); !w.empty() && warnings.size() < 4)
        warnings.push_back(fmt::format("rank {}: {}", r, w));
    all.push_back(std::move(rc));
  }
  if (std::string s = sharedCpuWarning(all); !s.empty())
    warnings.push_back(s + " (oversubscribed: the ranks time each other's work)");
  std::string joined;
  for (const auto& w : warnings)
    joined += (joined.empty() ? "" : "; ") + w;
  out.warning = joined;
  return out;
}

}  // namespace rdmabench::collective
