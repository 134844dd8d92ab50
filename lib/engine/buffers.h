#pragma once
// Page-aligned buffers and the per-connection buffer layout shared by all engines:
//
//   [0, area)            send area: payload sent / written / read from here
//   [area, 2*area)       receive area: the peer writes / sends here
//   [2*area, +kCtrl)     control slots: ack/fin messages (64 bytes each)
//
// `area` = max message size rounded up to 64 bytes (>= 64). Both sides use the same layout, so
// remote offsets are known without negotiation.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace rdmabench::engine {

inline constexpr uint64_t kCtrlBytes = 4096;
inline constexpr uint64_t kCtrlSendOffset = 0;   // within the control area
inline constexpr uint64_t kCtrlRecvOffset = 64;  // within the control area
inline constexpr uint32_t kCtrlMessageBytes = 8;

struct BufferLayout {
  uint64_t area = 64;
  uint64_t sendOffset() const { return 0; }
  uint64_t recvOffset() const { return area; }
  uint64_t ctrlOffset() const { return 2 * area; }
  uint64_t total() const { return 2 * area + kCtrlBytes; }
  static BufferLayout forMaxMessage(uint64_t maxBytes) {
    return BufferLayout{maxBytes < 64 ? 64 : (maxBytes + 63) / 64 * 64};
  }
};

// Page-aligned, zero-filled heap buffer (mmap-free: posix_memalign). Throws SystemError.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes);
  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_;
};

}  // namespace rdmabench::engine
