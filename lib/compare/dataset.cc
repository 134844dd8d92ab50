#include "compare/dataset.h"

namespace rdmabench::compare {

const char* sourceName(Source source) {
  switch (source) {
    case Source::kRdmabench:
      return "rdmabench";
    case Source::kOsu:
      return "OSU";
    case Source::kImb:
      return "IMB-MPI1";
    case Source::kPerftest:
      return "perftest";
  }
  return "?";
}

bool isMpi(Source source) {
  return source == Source::kOsu || source == Source::kImb;
}

const char* metricName(Metric metric) {
  switch (metric) {
    case Metric::kLatency:
      return "latency";
    case Metric::kBandwidth:
      return "bandwidth";
    case Metric::kCollective:
      return "collective";
  }
  return "?";
}

const char* metricUnit(Metric metric) {
  return metric == Metric::kBandwidth ? "MB/s" : "us";
}

bool lowerIsBetter(Metric metric) {
  return metric != Metric::kBandwidth;
}

}  // namespace rdmabench::compare
