#pragma once
// The one conversion of the typed transport facts (transport/info.h) to JSON, for the writers:
// the run header (report), the control channel (the server's device facts) and `rdmabench
// info`. Members are those the backends always wrote (nlohmann::json keeps them sorted).
// The peer's facts arrive as JSON (its accept) and are decoded ONCE, here, into the same types.

#include <string_view>

#include <nlohmann/json.hpp>

#include "transport/info.h"

namespace rdmabench::transport {

nlohmann::json toJson(const DeviceInfo& info);
nlohmann::json toJson(const ConnectionInfo& info);
// rma_write, rma_read, rma_emulated, max_message_bytes, max_send_queue, max_recv_queue,
// inline_bytes (what the accept and the run header carry; the other fields stay local).
nlohmann::json toJson(const Caps& caps);
// The device's facts, plus "connection" and "caps" objects when set (the run header's
// "local" / "remote"; a backend fact of the same name is overwritten).
nlohmann::json toJson(const SideInfo& side);
// A group of facts as one JSON object (later duplicates of a name win).
nlohmann::json toJson(const Facts& facts);

// Writes the set fields of `c` into `j` (an object; those keys are overwritten).
void writeCommonProperties(const CommonProperties& c, nlohmann::json& j);
// Reads the common facts back from a properties object (the peer's arrive over the wire):
// absent, negative or non-numeric values stay unset. Never throws.
CommonProperties readCommonProperties(const nlohmann::json& j);

// Longest fact text and member name, nesting of fact groups, and members per group accepted from
// the wire by deviceInfoFromJson (rdmabench's own facts stay far below).
inline constexpr size_t kMaxFactTextBytes = 4096;
inline constexpr size_t kMaxFactNameBytes = 256;
inline constexpr size_t kMaxFactDepth = 4;
inline constexpr size_t kMaxFactMembers = 256;

// Decodes the peer's device facts (`j`, the "device" object of its accept; untrusted) into a
// DeviceInfo whose toJson gives the same object back. The typed members (tx_depth, rx_depth,
// event_mode, CommonProperties::keys()) must have their type and range; the rest become facts:
// null, booleans, integers, texts and nested objects; other values (fractions, arrays) are
// dropped. Absent members stay unset. Throws ProtocolError naming `what` and the member for a
// wrong type, a text or name over the limits above, or nesting / members beyond them.
DeviceInfo deviceInfoFromJson(const nlohmann::json& j, std::string_view what);
// Decodes the peer's caps (`j`, the "caps" object of its accept; untrusted): the members toJson
// writes, absent ones false / 0, unknown ones ignored. Throws ProtocolError naming `what` and
// the member for a wrong type or an out-of-range number.
Caps capsFromJson(const nlohmann::json& j, std::string_view what);

}  // namespace rdmabench::transport
