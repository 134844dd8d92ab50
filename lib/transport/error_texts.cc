// ErrorTexts (error_texts.h) and the completion helpers of transport.h.
#include "transport/error_texts.h"

#include <fmt/format.h>

namespace rdmabench::transport {

const char* toString(CompletionStatus status) {
  switch (status) {
    case CompletionStatus::kSuccess:
      return "success";
    case CompletionStatus::kError:
      return "error";
    case CompletionStatus::kTruncated:
      return "truncated";
    case CompletionStatus::kFlushed:
      return "flushed";
  }
  return "?";
}

uint32_t ErrorTexts::keep(std::string text) {
  if (texts_.empty()) texts_.resize(kKeptErrors);
  const uint32_t id = next_++;
  if (next_ == 0) next_ = 1;  // after 2^32 failures: 0 stays "no error"
  texts_[id % kKeptErrors] = std::move(text);
  return id;
}

std::string ErrorTexts::text(uint32_t id) const {
  const uint32_t newest = next_ - 1;
  if (id == 0 || texts_.empty() || id > newest || newest - id >= kKeptErrors)
    return fmt::format("(error {} no longer kept: {} later failures)", id,
                       id <= newest ? newest - id : 0);
  return texts_[id % kKeptErrors];
}

std::string genericErrorText(const Completion& c) {
  return fmt::format("{} completion {} (status {})", toString(c.op), toString(c.status), c.code);
}

std::string Device::errorText(const Completion& c) const {
  return genericErrorText(c);
}

}  // namespace rdmabench::transport
