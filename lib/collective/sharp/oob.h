#pragma once
// The three out-of-band collectives libsharp_coll asks its caller for (struct
// sharp_coll_out_of_band_colls: bcast, barrier, gather), built on rdmabench's own Communicator:
// binomial trees rooted at rank 0 over the tree peers (topology.h), through a staging area in
// the communicator's data area, chunked so any length fits. A root other than 0 costs one more
// pass (up the tree to 0, or down from 0). Barrier = the communicator's dissemination barrier.
// Every wait is bounded by the communicator's timeout and names the phase; a dead rank is named.
// Needs the "tree" and "barrier" peers (peersFor). No SHARP header: always built and tested.
// Thread-safety: one thread (the one that calls into libsharp_coll).

#include <cstdint>
#include <string>

#include "collective/comm.h"

namespace rdmabench::collective::sharp {

class OobColls {
 public:
  // Staging area: [stageOffset, stageOffset + stageBytes) of comm's data area (>= 64 bytes).
  OobColls(Communicator& comm, uint64_t stageOffset, uint64_t stageBytes);

  // `len` bytes of `root`'s buf end up in every rank's buf.
  void bcast(void* buf, uint64_t len, int root);
  void barrier();
  // Every rank's `len` bytes of sbuf land at rbuf + rank * len on `root` (rbuf may be null
  // elsewhere).
  void gather(int root, const void* sbuf, void* rbuf, uint64_t len);

  // C callbacks for sharp_coll_out_of_band_colls; `ctx` is an OobColls*. They return 0, or -1
  // after keeping the error's text (exceptions never cross the C library).
  static int bcastCb(void* ctx, void* buf, int len, int root);
  static int barrierCb(void* ctx);
  static int gatherCb(void* ctx, int root, void* sbuf, void* rbuf, int len);
  // The text of the last callback failure ("" = none), cleared by the call.
  std::string takeError();

 private:
  int subtreeEnd(int rank) const;
  void down(uint64_t len, const std::string& what);  // stage of rank 0 -> every rank's stage
  uint8_t* stage() { return comm_.data() + stageOffset_; }

  Communicator& comm_;
  uint64_t stageOffset_, stageBytes_;
  std::string error_;
};

}  // namespace rdmabench::collective::sharp
