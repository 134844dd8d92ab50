#pragma once
// Facts about this machine and moment for run headers. Thread-safe.

#include <string>

namespace rdmabench {

// This machine's host name (gethostname; "" when it fails).
std::string hostName();
// Current UTC time as ISO 8601, seconds: "2026-11-30T21:48:17Z".
std::string isoDateUtc();

}  // namespace rdmabench
