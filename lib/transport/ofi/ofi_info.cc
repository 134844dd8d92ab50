#include "transport/ofi/ofi_info.h"

#include <fmt/format.h>
#include <rdma/fi_errno.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "common/error.h"

namespace rdmabench::transport::ofi {
namespace {

std::string str(const char* s) {
  return s ? std::string(s) : std::string();
}

bool equalsNoCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Hints for an FI_EP_RDM (FI_MSG|FI_TAGGED) or FI_EP_MSG (FI_MSG) endpoint as the backend uses
// it (see docs/transport-ofi.md).
InfoPtr makeHints(const std::string& provider, bool withRma, fi_ep_type type) {
  InfoPtr hints(fi_allocinfo());
  if (!hints) throw TransportError("fi_allocinfo: out of memory");
  hints->ep_attr->type = type;
  hints->caps = FI_MSG | (type == FI_EP_RDM ? FI_TAGGED : 0) | (withRma ? FI_RMA : 0);
  // One struct fi_context2 per operation covers providers that want FI_CONTEXT or
  // FI_CONTEXT2.
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  // FI_MR_ENDPOINT only for RDM: with one endpoint per connection a region would have to be
  // bound to every connection's endpoint.
  hints->domain_attr->mr_mode =
      static_cast<int>(type == FI_EP_RDM ? kMrModeHonoured : kMrModeHonoured & ~FI_MR_ENDPOINT);
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  // Progress stays unspecified: asking for FI_PROGRESS_AUTO makes ofi_rxm start a thread.
  if (!provider.empty()) hints->fabric_attr->prov_name = strdup(provider.c_str());
  return hints;
}

// fi_getinfo with our hints; returns its rc (0 or negative) and the list in `out`.
int query(const std::string& provider, bool withRma, const std::string& node, fi_ep_type type,
          InfoPtr& out) {
  InfoPtr hints = makeHints(provider, withRma, type);
  fi_info* list = nullptr;
  int rc = fi_getinfo(kApiVersion, node.empty() ? nullptr : node.c_str(), nullptr,
                      node.empty() ? 0 : FI_SOURCE, hints.get(), &list);
  out.reset(list);
  return rc;
}

// Unique provider names that offer an endpoint of `type` (RDM: FI_MSG|FI_TAGGED) here.
std::string providerList(fi_ep_type type) {
  InfoPtr list;
  int rc = query("", false, "", type, list);
  if (rc != 0 || !list) return fmt::format("none (fi_getinfo: {})", fiError(rc));
  std::vector<std::string> names;
  for (fi_info* i = list.get(); i; i = i->next) {
    std::string n = str(i->fabric_attr->prov_name);
    bool seen = false;
    for (const auto& m : names)
      seen = seen || m == n;
    if (!seen) names.push_back(n);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// "(default: 16384)" / "(default 131072)" / "(default: true)" in a help string -> value.
std::string defaultFromHelp(const char* help) {
  if (!help) return "";
  const char* p = strstr(help, "(default");
  if (!p) return "";
  p += strlen("(default");
  while (*p == ':' || *p == ' ')
    ++p;
  std::string v;
  while (*p && *p != ')' && *p != ',' && *p != '/' && *p != ' ')
    v += *p++;
  return v;
}

struct ParamValue {
  std::string value;
  std::string source;  // "env" or "default"
};

// Reads libfabric's registered parameters (values set in the environment, defaults from the
// provider's help text); `fallback` is the documented 1.17 default when no help text parses.
class Params {
 public:
  Params() {
    fi_param* params = nullptr;
    int count = 0;
    if (fi_getparams(&params, &count) == 0 && params) {
      for (int i = 0; i < count; ++i)
        byName_[str(params[i].name)] = {str(params[i].value),
                                        defaultFromHelp(params[i].help_string)};
      fi_freeparams(params);
    }
  }
  ParamValue get(const std::string& name, const std::string& fallback) const {
    auto it = byName_.find(name);
    if (it != byName_.end() && !it->second.first.empty()) return {it->second.first, "env"};
    if (const char* env = getenv(name.c_str())) return {env, "env"};
    if (it != byName_.end() && !it->second.second.empty()) return {it->second.second, "default"};
    return {fallback, "default"};
  }

 private:
  std::map<std::string, std::pair<std::string, std::string>> byName_;  // name -> (env, default)
};

uint64_t toBytes(const std::string& v, uint64_t fallback) {
  char* end = nullptr;
  unsigned long long x = strtoull(v.c_str(), &end, 0);
  return (end && end != v.c_str()) ? x : fallback;
}

bool toBool(const std::string& v) {
  std::string l;
  for (char c : v)
    l += static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return l == "1" || l == "true" || l == "yes" || l == "on";
}

}  // namespace

std::string fiError(int64_t rc) {
  return fmt::format("{} ({})", fi_strerror(static_cast<int>(rc < 0 ? -rc : rc)), rc);
}

std::string mrModeNames(uint64_t mrMode) {
  static const std::pair<uint64_t, const char*> kBits[] = {
      {FI_MR_LOCAL, "FI_MR_LOCAL"},         {FI_MR_RAW, "FI_MR_RAW"},
      {FI_MR_VIRT_ADDR, "FI_MR_VIRT_ADDR"}, {FI_MR_ALLOCATED, "FI_MR_ALLOCATED"},
      {FI_MR_PROV_KEY, "FI_MR_PROV_KEY"},   {FI_MR_MMU_NOTIFY, "FI_MR_MMU_NOTIFY"},
      {FI_MR_RMA_EVENT, "FI_MR_RMA_EVENT"}, {FI_MR_ENDPOINT, "FI_MR_ENDPOINT"},
      {FI_MR_HMEM, "FI_MR_HMEM"},           {FI_MR_COLLECTIVE, "FI_MR_COLLECTIVE"},
  };
  std::string out;
  uint64_t rest = mrMode;
  for (const auto& [bit, name] : kBits) {
    if (!(mrMode & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
    rest &= ~bit;
  }
  if (rest) out += fmt::format("{}0x{:x}", out.empty() ? "" : "|", rest);
  return out.empty() ? "none" : out;
}

Selection selectInfo(const DeviceOptions& options) {
  const std::string epType = options.endpointType.empty() ? "rdm" : options.endpointType;
  if (epType != "rdm" && epType != "msg")
    throw UsageError(fmt::format("--ep: unknown endpoint type '{}' (valid: rdm, msg)", epType));
  const bool msg = epType == "msg";
  const fi_ep_type type = msg ? FI_EP_MSG : FI_EP_RDM;
  const char* typeName = msg ? "FI_EP_MSG" : "FI_EP_RDM";
  const char* capsName = msg ? "FI_MSG" : "FI_MSG|FI_TAGGED";

  const std::string provider =
      options.provider.empty() ? (msg ? kDefaultMsgProvider : kDefaultProvider) : options.provider;
  InfoPtr list;
  int rc = 0;
  // shm names its endpoint's shared-memory region after the source address: with the control
  // connection's address (127.0.0.1 on both sides of a loopback run) the client and the server
  // created the same region "127.0.0.1:0:0", the second overwrote the first ("Overwriting shm
  // from dead process") and the server's session failed with EBUSY or crashed. Without a source
  // address shm picks a per-process name.
  const std::string source = equalsNoCase(provider, "shm") ? std::string() : options.localHost;
  for (bool withRma : {true, false}) {
    rc = query(provider, withRma, source, type, list);
    if (rc == 0 && list) break;
    if (rc != 0 && rc != -FI_ENODATA)
      throw TransportError(fmt::format(
          "fi_getinfo(provider '{}', {}{}): {}", provider, typeName,
          options.localHost.empty() ? "" : ", source " + options.localHost, fiError(rc)));
  }
  if (!list)
    throw UsageError(fmt::format(
        "--provider: '{}' offers no {} endpoint with {} here{} (fi_getinfo: {}); providers "
        "available for --ep {}: {}",
        provider, typeName, capsName,
        options.localHost.empty() ? "" : " for source address " + options.localHost, fiError(rc),
        epType, providerList(type)));

  // Results repeat per interface and address family: match the provider name exactly when
  // libfabric returned such entries (a core name like "tcp" may come back as "tcp;ofi_rxm").
  bool anyExact = false;
  for (fi_info* i = list.get(); i; i = i->next)
    anyExact = anyExact || equalsNoCase(str(i->fabric_attr->prov_name), provider);
  fi_info* chosen = nullptr;
  std::vector<std::string> domains;
  for (fi_info* i = list.get(); i; i = i->next) {
    if (anyExact && !equalsNoCase(str(i->fabric_attr->prov_name), provider)) continue;
    std::string d = str(i->domain_attr->name);
    if (!chosen && (options.device.empty() || d == options.device)) chosen = i;
    bool seen = false;
    for (const auto& m : domains)
      seen = seen || m == d;
    if (!seen) domains.push_back(d);
  }
  if (!chosen)
    throw UsageError(fmt::format("--domain: '{}' not found for provider '{}' (domains: {})",
                                 options.device, provider, fmt::join(domains, ", ")));
  Selection s;
  s.info.reset(fi_dupinfo(chosen));
  if (!s.info) throw TransportError("fi_dupinfo: out of memory");
  s.rmaGranted = (s.info->caps & FI_RMA) != 0;
  s.msg = msg;
  return s;
}

Facts protocolThresholds(const fi_info& info) {
  const std::string prov = str(info.fabric_attr->prov_name);
  Facts out;
  if (prov.find("ofi_rxm") == std::string::npos) return out;
  const std::string core = prov.substr(0, prov.find(';'));
  Params params;
  // Documented 1.17 defaults, used only when libfabric's help text does not parse.
  const ParamValue buffer = params.get("FI_OFI_RXM_BUFFER_SIZE", "16384");
  const ParamValue eager = params.get("FI_OFI_RXM_EAGER_LIMIT", buffer.value);
  const ParamValue sar = params.get("FI_OFI_RXM_SAR_LIMIT", "131072");
  const ParamValue rndvWrite = params.get("FI_OFI_RXM_USE_RNDV_WRITE", "false");
  const ParamValue dynRbuf = params.get("FI_OFI_RXM_ENABLE_DYN_RBUF", "true");
  const ParamValue srx = params.get("FI_OFI_RXM_USE_SRX", "0");
  auto knob = [](const std::string& value, const std::string& source) {
    Facts k;
    addFact(k, "value", value);
    addFact(k, "source", source);
    return k;
  };
  Facts knobs;
  for (const auto& [name, p] : {std::pair{"FI_OFI_RXM_BUFFER_SIZE", buffer},
                                {"FI_OFI_RXM_EAGER_LIMIT", eager},
                                {"FI_OFI_RXM_SAR_LIMIT", sar},
                                {"FI_OFI_RXM_USE_RNDV_WRITE", rndvWrite},
                                {"FI_OFI_RXM_ENABLE_DYN_RBUF", dynRbuf},
                                {"FI_OFI_RXM_USE_SRX", srx}})
    addFact(knobs, name, knob(p.value, p.source));
  for (const char* name : {"FI_TCP_IFACE", "FI_VERBS_IFACE", "FI_VERBS_DEVICE_NAME"})
    if (const char* v = getenv(name)) addFact(knobs, name, knob(v, "env"));

  const uint64_t bufferBytes = toBytes(buffer.value, 16384);
  const uint64_t sarBytes = toBytes(sar.value, 131072);
  // rxm over verbs forces the eager limit to the bounce-buffer size; over tcp with dynamic
  // receive buffers the eager limit is free and SAR is not used (fi_rxm(7), 1.17 notes).
  const bool tcpLike = core == "tcp" || core == "net";
  const uint64_t eagerBytes = tcpLike ? toBytes(eager.value, bufferBytes) : bufferBytes;
  const bool sarUsed = !(tcpLike && toBool(dynRbuf.value)) && sarBytes > eagerBytes;
  const std::string rndv = toBool(rndvWrite.value) ? "RMA write" : "RMA read";
  addFact(out, "layer", "ofi_rxm");
  addFact(out, "core", core);
  addFact(out, "eager_limit_bytes", eagerBytes);
  if (sarUsed)
    addFact(out, "sar_limit_bytes", sarBytes);
  else
    addFact(out, "sar_limit_bytes", nullptr);
  addFact(out, "rendezvous", rndv);
  addFact(out, "summary",
          sarUsed ? fmt::format("eager <= {} B, SAR <= {} B, rendezvous ({}) above", eagerBytes,
                                sarBytes, rndv)
                  : fmt::format("eager <= {} B, rendezvous ({}) above (no SAR: dynamic receive "
                                "buffers)",
                                eagerBytes, rndv));
  addFact(out, "knobs", std::move(knobs));
  return out;
}

namespace {

// FI_EP_MSG providers (--ep msg) and their domains, in fi_getinfo order.
nlohmann::json msgProvidersJson() {
  nlohmann::json msgProviders = nlohmann::json::array();
  InfoPtr msgList;
  if (query("", false, "", FI_EP_MSG, msgList) != 0) return msgProviders;
  std::map<std::string, std::vector<std::string>> byProv;
  std::vector<std::string> msgOrder;
  for (fi_info* i = msgList.get(); i; i = i->next) {
    const std::string prov = str(i->fabric_attr->prov_name);
    const std::string dom = str(i->domain_attr->name);
    if (!byProv.count(prov)) msgOrder.push_back(prov);
    auto& doms = byProv[prov];
    if (std::find(doms.begin(), doms.end(), dom) == doms.end()) doms.push_back(dom);
  }
  for (const auto& prov : msgOrder)
    msgProviders.push_back({{"provider", prov}, {"domains", byProv[prov]}});
  return msgProviders;
}

}  // namespace

BackendStatus probeProviders() {
  BackendStatus s;
  s.name = "ofi";
  s.built = true;
  const uint32_t v = fi_version();
  const std::string version = fmt::format("{}.{}", FI_MAJOR(v), FI_MINOR(v));
  InfoPtr list;
  int rc = query("", false, "", FI_EP_RDM, list);
  // `rma` tells what a run will get: selectInfo() asks for FI_RMA first, and providers such as
  // ofi_rxm grant only the capabilities a query asks for, so the answer comes from a query with
  // FI_RMA, not from the caps of the query without it.
  std::set<std::pair<std::string, std::string>> withRma;
  InfoPtr rmaList;
  if (query("", true, "", FI_EP_RDM, rmaList) == 0)
    for (fi_info* i = rmaList.get(); i; i = i->next)
      if (i->caps & FI_RMA)
        withRma.emplace(str(i->fabric_attr->prov_name), str(i->domain_attr->name));
  nlohmann::json providers = nlohmann::json::object();
  std::vector<std::string> order;
  for (fi_info* i = rc == 0 ? list.get() : nullptr; i; i = i->next) {
    const std::string prov = str(i->fabric_attr->prov_name);
    const std::string dom = str(i->domain_attr->name);
    if (!providers.contains(prov)) {
      providers[prov] = nlohmann::json::object();
      order.push_back(prov);
    }
    auto& d = providers[prov];
    if (d.contains(dom)) {
      // fi_getinfo lists one entry per (fabric, endpoint/protocol variant): name each fabric once.
      auto& fabrics = d[dom]["fabrics"];
      const std::string fabric = str(i->fabric_attr->name);
      if (std::find(fabrics.begin(), fabrics.end(), fabric) == fabrics.end())
        fabrics.push_back(fabric);
      continue;
    }
    d[dom] = {{"fabrics", nlohmann::json::array({str(i->fabric_attr->name)})},
              {"inject_size", i->tx_attr->inject_size},
              {"max_msg_size", i->ep_attr->max_msg_size},
              {"mr_mode", mrModeNames(static_cast<uint64_t>(i->domain_attr->mr_mode))},
              {"rma", (i->caps & FI_RMA) != 0 || withRma.count({prov, dom}) > 0}};
  }
  nlohmann::json list2 = nlohmann::json::array();
  std::vector<std::string> summary;
  for (const auto& prov : order) {
    std::vector<std::string> doms;
    nlohmann::json dl = nlohmann::json::array();
    for (auto& [dom, facts] : providers[prov].items()) {
      doms.push_back(dom);
      nlohmann::json f = facts;
      f["domain"] = dom;
      dl.push_back(f);
    }
    list2.push_back({{"provider", prov}, {"domains", dl}});
    summary.push_back(fmt::format("{} ({})", prov, fmt::join(doms, ", ")));
  }
  s.details = {{"libfabric", version},
               {"endpoint_type", "FI_EP_RDM"},
               {"providers", list2},
               {"msg_providers", msgProvidersJson()}};
  s.usable = !order.empty();
  s.reason = s.usable ? fmt::format("libfabric {}: {}", version, fmt::join(summary, "; "))
                      : fmt::format(
                            "libfabric {}: no provider offers an FI_EP_RDM endpoint with "
                            "FI_MSG|FI_TAGGED here (fi_getinfo: {})",
                            version, fiError(rc));
  return s;
}

}  // namespace rdmabench::transport::ofi
