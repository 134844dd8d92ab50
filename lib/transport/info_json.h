#pragma once
// The one conversion of the typed transport facts (transport/info.h) to JSON, for the writers:
// the run header (report), the control channel (the server's device facts) and `rdmabench
// info`. Members are those the backends always wrote (nlohmann::json keeps them sorted).

#include <nlohmann/json.hpp>

#include "transport/info.h"

namespace rdmabench::transport {

nlohmann::json toJson(const DeviceInfo& info);
nlohmann::json toJson(const ConnectionInfo& info);
// A group of facts as one JSON object (later duplicates of a name win).
nlohmann::json toJson(const Facts& facts);

// Writes the set fields of `c` into `j` (an object; those keys are overwritten).
void writeCommonProperties(const CommonProperties& c, nlohmann::json& j);
// Reads the common facts back from a properties object (the peer's arrive over the wire):
// absent, negative or non-numeric values stay unset. Never throws.
CommonProperties readCommonProperties(const nlohmann::json& j);

}  // namespace rdmabench::transport
