// The peer's transport facts, decoded once from its accept (transport/info_json.h). Untrusted:
// typed members go through json_read's range-checked readers; facts are bounded in name and text
// length, nesting and count.
#include <limits>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
#include "transport/info_json.h"

namespace rdmabench::transport {

namespace {

using nlohmann::json;

bool isTypedDeviceMember(std::string_view key) {
  if (key == "tx_depth" || key == "rx_depth" || key == "event_mode") return true;
  for (const char* k : CommonProperties::keys())
    if (key == k) return true;
  return false;
}

template <typename T>
std::optional<T> optionalUint(const json& j, std::string_view key, std::string_view what) {
  if (!jsonFind(j, key, what)) return std::nullopt;
  return static_cast<T>(jsonUint(j, key, what, 0, 0, std::numeric_limits<T>::max()));
}

CommonProperties commonFromJson(const json& j, std::string_view what) {
  CommonProperties c;
  c.port = optionalUint<uint32_t>(j, "port", what);
  c.gidIndex = optionalUint<uint32_t>(j, "gid_index", what);
  c.activeMtu = optionalUint<uint32_t>(j, "active_mtu", what);
  c.mtu = optionalUint<uint32_t>(j, "mtu", what);
  c.inlineBytes = optionalUint<uint64_t>(j, "inline_bytes", what);
  c.injectSize = optionalUint<uint64_t>(j, "inject_size", what);
  return c;
}

// The members of object `j` as facts (`skipTyped`: without the typed device members). Recursion
// is bounded by kMaxFactDepth.
Facts factsFromJson(const json& j, std::string_view what, size_t depth, bool skipTyped) {
  if (j.size() > kMaxFactMembers)
    throw ProtocolError(
        fmt::format("{}: device facts: more than {} members", what, kMaxFactMembers));
  Facts out;
  for (const auto& [key, value] : j.items()) {
    if (skipTyped && isTypedDeviceMember(key)) continue;
    if (key.size() > kMaxFactNameBytes)
      throw ProtocolError(fmt::format("{}: device fact name \"{}...\" longer than {} bytes", what,
                                      escapeForLog(key, 64), kMaxFactNameBytes));
    switch (value.type()) {
      case json::value_t::null:
        addFact(out, key, nullptr);
        break;
      case json::value_t::boolean:
        addFact(out, key, value.get<bool>());
        break;
      case json::value_t::number_integer:
        addFact(out, key, value.get<int64_t>());
        break;
      case json::value_t::number_unsigned:
        addFact(out, key, value.get<uint64_t>());
        break;
      case json::value_t::string:
        addFact(out, key, jsonString(j, key, what, {}, kMaxFactTextBytes));
        break;
      case json::value_t::object:
        if (depth >= kMaxFactDepth)
          throw ProtocolError(fmt::format("{}: device fact \"{}\" nested deeper than {} levels",
                                          what, escapeForLog(key, 64), kMaxFactDepth));
        addFact(out, key, factsFromJson(value, what, depth + 1, false));
        break;
      default:
        break;  // fractions, arrays: no such fact (Fact::Value), dropped
    }
  }
  return out;
}

}  // namespace

DeviceInfo deviceInfoFromJson(const json& j, std::string_view what) {
  DeviceInfo d;
  d.common = commonFromJson(j, what);  // throws when `j` is not an object
  d.txDepth = optionalUint<uint32_t>(j, "tx_depth", what);
  d.rxDepth = optionalUint<uint32_t>(j, "rx_depth", what);
  if (jsonFind(j, "event_mode", what)) d.eventMode = jsonBool(j, "event_mode", what, false);
  d.facts = factsFromJson(j, what, 1, true);
  return d;
}

Caps capsFromJson(const json& j, std::string_view what) {
  constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
  Caps c;
  c.rmaWrite = jsonBool(j, "rma_write", what, false);
  c.rmaRead = jsonBool(j, "rma_read", what, false);
  c.rmaEmulated = jsonBool(j, "rma_emulated", what, false);
  c.maxMessageBytes = jsonUint(j, "max_message_bytes", what, 0);
  c.maxSendQueue = static_cast<uint32_t>(jsonUint(j, "max_send_queue", what, 0, 0, kU32));
  c.maxRecvQueue = static_cast<uint32_t>(jsonUint(j, "max_recv_queue", what, 0, 0, kU32));
  c.inlineBytes = static_cast<uint32_t>(jsonUint(j, "inline_bytes", what, 0, 0, kU32));
  return c;
}

}  // namespace rdmabench::transport
