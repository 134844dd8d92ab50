#pragma once
// libfabric is opened with dlopen when the ofi backend first needs it (a probe, a device), not
// linked into the binary: Debian's libfabric.so.1 links libpsm2 and libpsm_infinipath, whose
// constructors each calibrate a cycle counter for 100 ms (usleep(125) in a loop, pinned to CPU 0)
// in every process that loads them, so every `rdmabench --help` or `version` spent 0.2 s there.
// ofi_library.cc defines the few exported libfabric functions the backend and its tests call
// (fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric, fi_strerror, fi_version, fi_getparams,
// fi_freeparams) as forwarders to the loaded library; every other call of the API is an inline
// call through the objects these return. Thread-safe (std::call_once).

#include <string>

namespace rdmabench::transport::ofi {

// Opens libfabric.so.1 once (the loader's search path, then the directory pkg-config named at
// build time); returns "" when it is loaded, else why not (dlerror's text).
const std::string& loadLibfabric();

// True once libfabric was loaded in this process (never loads it).
bool libfabricLoaded();

// loadLibfabric(), throwing TransportError "libfabric.so.1 could not be loaded: DLERROR" when it
// fails.
void requireLibfabric();

}  // namespace rdmabench::transport::ofi
