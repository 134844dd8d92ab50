#pragma once
// The report of `rdmabench check` (docs/check.md): text (the drain reason first when unhealthy,
// then findings, notes, inventory, counters that moved, measurements, noise, baseline and steps)
// or JSON (everything: inventory, every counter delta, figures, verdicts, the baseline used).
// Thread-safety: pure functions over values.

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "check/result.h"

namespace rdmabench::check {

void writeText(std::ostream& out, const CheckResult& r);
nlohmann::json toJson(const CheckResult& r);
// A document for a check that could not run: {"test": "check", "verdict": "error", "error": ...}.
nlohmann::json errorJson(const std::string& message, int exitStatus);

nlohmann::json inventoryJson(const Inventory& inv);

}  // namespace rdmabench::check
