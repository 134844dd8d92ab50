// The typed transport facts (info.h) and their one conversion to JSON (info_json.h).
#include <limits>

#include <fmt/format.h>

#include "transport/info.h"
#include "transport/info_json.h"

namespace rdmabench::transport {

namespace {

template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <typename T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return;
  if (it->is_number_unsigned()) {
    uint64_t u = it->get<uint64_t>();
    if (u <= std::numeric_limits<T>::max()) v = static_cast<T>(u);
  } else {
    int64_t i = it->get<int64_t>();
    if (i >= 0 && static_cast<uint64_t>(i) <= std::numeric_limits<T>::max()) v = static_cast<T>(i);
  }
}

nlohmann::json valueJson(const Fact::Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Facts>)
          return toJson(x);
        else
          return nlohmann::json(x);
      },
      v);
}

}  // namespace

const std::vector<const char*>& CommonProperties::keys() {
  static const std::vector<const char*> k = {"port", "gid_index",    "active_mtu",
                                             "mtu",  "inline_bytes", "inject_size"};
  return k;
}

std::string CommonProperties::summary() const {
  nlohmann::json j = nlohmann::json::object();
  writeCommonProperties(*this, j);
  std::string s;
  for (const char* key : keys())
    if (j.contains(key)) s += fmt::format("{}{}={}", s.empty() ? "" : " ", key, j[key].dump());
  return s;
}

void writeCommonProperties(const CommonProperties& c, nlohmann::json& j) {
  put(j, "port", c.port);
  put(j, "gid_index", c.gidIndex);
  put(j, "active_mtu", c.activeMtu);
  put(j, "mtu", c.mtu);
  put(j, "inline_bytes", c.inlineBytes);
  put(j, "inject_size", c.injectSize);
}

CommonProperties readCommonProperties(const nlohmann::json& j) {
  CommonProperties c;
  if (!j.is_object()) return c;
  get(j, "port", c.port);
  get(j, "gid_index", c.gidIndex);
  get(j, "active_mtu", c.activeMtu);
  get(j, "mtu", c.mtu);
  get(j, "inline_bytes", c.inlineBytes);
  get(j, "inject_size", c.injectSize);
  return c;
}

nlohmann::json toJson(const Facts& facts) {
  nlohmann::json j = nlohmann::json::object();
  for (const Fact& f : facts)
    j[f.name] = valueJson(f.value);
  return j;
}

nlohmann::json toJson(const DeviceInfo& info) {
  nlohmann::json j = toJson(info.facts);
  put(j, "tx_depth", info.txDepth);
  put(j, "rx_depth", info.rxDepth);
  put(j, "event_mode", info.eventMode);
  writeCommonProperties(info.common, j);
  return j;
}

nlohmann::json toJson(const ConnectionInfo& info) {
  nlohmann::json j = toJson(info.facts);
  if (info.peer) j[info.peerAddress ? "peer_address" : "peer"] = *info.peer;
  writeCommonProperties(info.common, j);
  return j;
}

nlohmann::json toJson(const Caps& c) {
  return nlohmann::json{
      {"rma_write", c.rmaWrite},          {"rma_read", c.rmaRead},
      {"rma_emulated", c.rmaEmulated},    {"max_message_bytes", c.maxMessageBytes},
      {"max_send_queue", c.maxSendQueue}, {"max_recv_queue", c.maxRecvQueue},
      {"inline_bytes", c.inlineBytes}};
}

nlohmann::json toJson(const SideInfo& side) {
  nlohmann::json j = toJson(side.device);
  if (side.connection) j["connection"] = toJson(*side.connection);
  if (side.caps) j["caps"] = toJson(*side.caps);
  return j;
}

}  // namespace rdmabench::transport
