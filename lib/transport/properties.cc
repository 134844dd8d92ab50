// CommonProperties (transport.h): the shared, typed device / connection facts.
#include <limits>

#include <fmt/format.h>

#include "transport/transport.h"

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

}  // namespace

const std::vector<const char*>& CommonProperties::keys() {
  static const std::vector<const char*> k = {"port", "gid_index",    "active_mtu",
                                             "mtu",  "inline_bytes", "inject_size"};
  return k;
}

void CommonProperties::writeTo(nlohmann::json& j) const {
  put(j, "port", port);
  put(j, "gid_index", gidIndex);
  put(j, "active_mtu", activeMtu);
  put(j, "mtu", mtu);
  put(j, "inline_bytes", inlineBytes);
  put(j, "inject_size", injectSize);
}

CommonProperties CommonProperties::readFrom(const nlohmann::json& j) {
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

std::string CommonProperties::summary() const {
  nlohmann::json j = nlohmann::json::object();
  writeTo(j);
  std::string s;
  for (const char* key : keys())
    if (j.contains(key)) s += fmt::format("{}{}={}", s.empty() ? "" : " ", key, j[key].dump());
  return s;
}

}  // namespace rdmabench::transport
