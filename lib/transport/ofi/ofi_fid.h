#pragma once
// RAII for libfabric objects: FidPtr<T> closes its fid (fi_close) on destruction. Internal to
// lib/transport/ofi/.

#include <rdma/fabric.h>

#include <memory>

namespace rdmabench::transport::ofi {

template <class T>
struct FidCloser {
  void operator()(T* p) const {
    if (p) fi_close(&p->fid);
  }
};
// Owns one libfabric object (fi_close on destruction).
template <class T>
using FidPtr = std::unique_ptr<T, FidCloser<T>>;

}  // namespace rdmabench::transport::ofi
