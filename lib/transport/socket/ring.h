#pragma once
// Fixed-capacity FIFO over a preallocated vector: no allocation after construction. Element
// addresses stay valid until the slot is reused. Not thread-safe.

#include <cstddef>
#include <vector>

namespace rdmabench::transport::socket {

template <typename T>
class Ring {
 public:
  explicit Ring(size_t capacity) : slots_(capacity == 0 ? 1 : capacity) {}
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == slots_.size(); }
  // i-th element from the front (0 = oldest); i < size().
  T& operator[](size_t i) { return slots_[wrap(head_ + i)]; }
  const T& operator[](size_t i) const { return slots_[wrap(head_ + i)]; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  // Raw storage slot i (0 <= i < capacity()), independent of head/size: for one-time setup
  // of per-slot fields such as buffer pointers.
  T& rawSlot(size_t i) { return slots_[i]; }
  // Returns the new back slot (still holding its old contents: the caller overwrites every
  // field). Precondition: !full().
  T& pushBack() {
    T& slot = slots_[wrap(head_ + size_)];
    ++size_;
    return slot;
  }
  void popFront() {
    head_ = wrap(head_ + 1);
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  size_t wrap(size_t i) const { return i >= slots_.size() ? i - slots_.size() : i; }
  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace rdmabench::transport::socket
