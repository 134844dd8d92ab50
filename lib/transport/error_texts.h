#pragma once
// ErrorTexts: the texts of failed completions, kept by the device that reported them, so a
// Completion stays plain data and a text is formatted only when something failed
// (Device::errorText). A bounded ring: the last kKeptErrors texts are kept. Not thread-safe
// (one thread per Device, like the rest of the transport).

#include <cstdint>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace rdmabench::transport {

class ErrorTexts {
 public:
  static constexpr uint32_t kKeptErrors = 1024;

  // Stores `text` and returns its id (never 0).
  uint32_t keep(std::string text);
  // The text of `id`; a short note for 0 or an id that has been overwritten since.
  std::string text(uint32_t id) const;

 private:
  std::vector<std::string> texts_;  // ring of kKeptErrors, filled on first use
  uint32_t next_ = 1;               // the next id
};

// The default text of a failed completion whose device keeps none (test doubles).
std::string genericErrorText(const Completion& c);

}  // namespace rdmabench::transport
