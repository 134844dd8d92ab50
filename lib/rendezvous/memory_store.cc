// In-process Store (store.h: MemoryStore).

#include <chrono>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace rdmabench::rendezvous {

void MemoryStore::set(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    data_[key] = value;
  }
  changed_.notify_all();
}

std::string MemoryStore::get(const std::string& key, int64_t timeoutMs) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto until = Clock::now() + std::chrono::milliseconds(timeoutMs < 0 ? 0 : timeoutMs);
  for (;;) {
    auto it = data_.find(key);
    if (it != data_.end()) return it->second;
    if (timeoutMs >= 0 && Clock::now() >= until)
      throw TimeoutError(fmt::format("memory store: waited {} ms for key '{}'", timeoutMs, key));
    changed_.wait_for(lock, std::chrono::milliseconds(20));
    throwIfInterrupted("waiting for the rendezvous store");
  }
}

int64_t MemoryStore::add(const std::string& key, int64_t delta) {
  int64_t v;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = data_.find(key);
    v = addCounter(it == data_.end() ? nullptr : &it->second, delta);
    data_[key] = encodeU64(static_cast<uint64_t>(v));
  }
  changed_.notify_all();
  return v;
}

}  // namespace rdmabench::rendezvous
