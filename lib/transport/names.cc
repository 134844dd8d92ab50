// Names of the transport enums (transport.h), in a file of their own so that code which only
// prints them (the fuzz library, spec.cc) need not link the backend registry.
#include "transport/transport.h"

namespace rdmabench::transport {

const char* toString(OpKind op) {
  switch (op) {
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kWrite:
      return "write";
    case OpKind::kRead:
      return "read";
  }
  return "?";
}

const char* toString(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::kBusyPoll:
      return "busy-poll";
    case ProgressMode::kYield:
      return "yield";
    case ProgressMode::kEvent:
      return "event";
  }
  return "?";
}

}  // namespace rdmabench::transport
