#pragma once
// Shared pieces of the libFuzzer targets (fuzz/*.cc, docs/testing.md "Fuzzing"). Each target
// feeds its bytes to the entry points the product calls on untrusted input and lets only the
// errors those entry points document (rdmabench::Error: ProtocolError, UsageError,
// TransportError, ...) pass; anything else (another exception, a sanitizer report, a hang)
// is a finding.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/bytes.h"
#include "rendezvous/channel.h"

namespace rdmabench::fuzz {

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Cuts `data` into control frames the way Channel::receive reads them from a socket (header
// checked by decodeHeader against the 1 MiB frame cap) and calls `onFrame(const Frame&)` for each
// complete one. Stops at a malformed header (the product closes the connection there) and at a
// truncated frame.
template <class F>
void forEachFrame(const uint8_t* data, size_t size, F&& onFrame) {
  size_t at = 0;
  while (size - at >= rendezvous::kFrameHeaderBytes) {
    uint32_t length = 0;
    uint16_t type = 0;
    try {
      rendezvous::decodeHeader(data + at, rendezvous::kDefaultMaxFrameBytes, length, type);
    } catch (const rdmabench::Error&) {
      return;
    }
    at += rendezvous::kFrameHeaderBytes;
    if (size - at < length) return;
    rendezvous::Frame f;
    f.type = type;
    f.payload.assign(data + at, data + at + length);
    at += length;
    onFrame(f);
  }
}

}  // namespace rdmabench::fuzz
