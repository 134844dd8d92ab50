#include "connect/connect.h"

#include <atomic>
#include <barrier>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"

namespace rdmabench::connect {

namespace {

constexpr uint32_t kMessageBytes = 8;
const char* const kStepNames[] = {"create", "connect", "first_message", "destroy"};
constexpr size_t kSteps = 4;

// What both sides share: the addresses each side created, the steps' wall times (side A), the
// first error, and the barrier that separates the steps.
struct Shared {
  explicit Shared(uint64_t n) : addressA(n), addressB(n), sync(2) {}
  std::vector<std::vector<uint8_t>> addressA, addressB;
  std::barrier<> sync;
  std::mutex mutex;
  std::exception_ptr error;  // the first side's failure
  std::atomic<bool> failed{false};
  std::string deviceA;
};

// One side: its device, registered buffer, connectors and endpoints. A is the side whose times
// are the per-connection samples.
class Side {
 public:
  Side(const ConnectParams& p, Shared& s, bool isA) : p_(p), s_(s), isA_(isA) {}

  // Runs the steps; side A records the samples and the wall times into `steps`.
  void run(std::vector<StepFigures>* steps) {
    try {
      device_ = transport::openDevice(p_.transport, p_.device);
      if (isA_) s_.deviceA = device_->name();
      buffer_.assign(p_.connections * 2 * kMessageBytes, 0);
      mr_ = device_->registerMemory(buffer_.data(), buffer_.size());
      int64_t stepStart = sync();
      for (size_t step = 0; step < kSteps; ++step) {
        stats::SampleSet samples;
        samples.reserve(p_.connections);
        runStep(step, samples);
        const int64_t end = sync();
        if (steps) {
          steps->push_back(
              {kStepNames[step], static_cast<double>(end - stepStart) / 1e6, samples.summarize()});
        }
        stepStart = end;
      }
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(s_.mutex);
        if (!s_.error) s_.error = std::current_exception();
      }
      s_.failed = true;
      s_.sync.arrive_and_drop();  // the other side's barriers go on alone (and see `failed`)
      teardown();
      return;
    }
    teardown();
  }

 private:
  // Waits for the other side (or returns at once when it dropped out); the time after it.
  int64_t sync() {
    if (s_.failed) throw TransportError("the other side failed");
    s_.sync.arrive_and_wait();
    if (s_.failed) throw TransportError("the other side failed");
    return nowNs();
  }

  std::string where(const char* what, uint64_t i) const {
    return fmt::format("{} connection {} of {} (side {})", what, i + 1, p_.connections,
                       isA_ ? 'A' : 'B');
  }

  void runStep(size_t step, stats::SampleSet& samples) {
    const uint64_t n = p_.connections;
    if (step == 0) {
      connectors_.resize(n);
      auto& mine = isA_ ? s_.addressA : s_.addressB;
      for (uint64_t i = 0; i < n; ++i) {
        throwIfInterrupted("creating connections");
        const int64_t t = nowNs();
        try {
          connectors_[i] = device_->createConnector();
          mine[i] = connectors_[i]->localAddress();
        } catch (const InterruptedError&) {
          throw;  // Ctrl-C stays an interruption (exit 4), not a failed step
        } catch (const Error& e) {
          throw TransportError(fmt::format("{}: {}", where("creating", i), e.what()));
        }
        samples.add(nowNs() - t);
      }
    } else if (step == 1) {
      endpoints_.resize(n);
      const auto& theirs = isA_ ? s_.addressB : s_.addressA;
      for (uint64_t i = 0; i < n; ++i) {
        throwIfInterrupted("connecting");
        const int64_t t = nowNs();
        try {
          endpoints_[i] = connectors_[i]->connect(theirs[i], Deadline(p_.timeoutMs));
        } catch (const InterruptedError&) {
          throw;
        } catch (const TimeoutError& e) {
          throw TimeoutError(fmt::format("{}: {}", where("connecting", i), e.what()));
        } catch (const Error& e) {
          throw TransportError(fmt::format("{}: {}", where("connecting", i), e.what()));
        }
        samples.add(nowNs() - t);
        connectors_[i].reset();
      }
    } else if (step == 2) {
      for (uint64_t i = 0; i < n; ++i)
        postRecv(i);
      sync();  // every receive is posted before the first send
      for (uint64_t i = 0; i < n; ++i) {
        throwIfInterrupted("first messages");
        const int64_t t = nowNs();
        if (isA_) {
          send(i);
          waitRecv(i);
        } else {
          waitRecv(i);
          send(i);
        }
        samples.add(nowNs() - t);
      }
      // Every send complete before the step ends: a backend may move a send only while its
      // sender polls (socket), and the last reply would otherwise wait for a poll that never comes.
      const Deadline d(p_.timeoutMs);
      while (sendsDone_ < n)
        drain(d, n - 1);
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        const int64_t t = nowNs();
        endpoints_[i].reset();
        samples.add(nowNs() - t);
      }
    }
  }

  void postRecv(uint64_t i) {
    const Deadline d(p_.timeoutMs);
    while (endpoints_[i]->postRecv(*mr_, (2 * i + 1) * kMessageBytes, kMessageBytes, i) ==
           transport::PostResult::kRetry) {
      drain(d, i);
    }
  }

  void send(uint64_t i) {
    const Deadline d(p_.timeoutMs);
    while (endpoints_[i]->postSend(*mr_, 2 * i * kMessageBytes, kMessageBytes, i, true) ==
           transport::PostResult::kRetry) {
      drain(d, i);
    }
  }

  void waitRecv(uint64_t i) {
    const Deadline d(p_.timeoutMs);
    while (!received_.count(i))
      drain(d, i);
    received_.erase(i);
  }

  // One poll: records receives, fails on a failed completion or a passed deadline.
  void drain(const Deadline& d, uint64_t i) {
    transport::Completion c[16];
    const size_t got = device_->poll(c, 16);
    for (size_t k = 0; k < got; ++k) {
      if (!c[k].ok())
        throw TransportError(fmt::format("{}: {} completion failed: {}",
                                         where("first message of", c[k].context),
                                         transport::toString(c[k].op), device_->errorText(c[k])));
      if (c[k].op == transport::OpKind::kRecv) received_.insert(c[k].context);
      if (c[k].op == transport::OpKind::kSend) ++sendsDone_;
    }
    if (got == 0 && d.expired())
      throw TimeoutError(fmt::format("{}: no message from the other side after {} ms",
                                     where("first message of", i), p_.timeoutMs));
    if (got == 0) throwIfInterrupted("first messages");
  }

  void teardown() noexcept {
    try {
      endpoints_.clear();
      connectors_.clear();
      mr_.reset();
      device_.reset();
    } catch (...) {
    }
  }

  const ConnectParams& p_;
  Shared& s_;
  bool isA_;
  std::unique_ptr<transport::Device> device_;
  std::vector<uint8_t> buffer_;
  std::unique_ptr<transport::MemoryRegion> mr_;
  std::vector<std::unique_ptr<transport::Connector>> connectors_;
  std::vector<std::unique_ptr<transport::Endpoint>> endpoints_;
  std::set<uint64_t> received_;
  uint64_t sendsDone_ = 0;
};

}  // namespace

double ConnectResult::setupPerSec() const {
  double ms = 0;
  for (const StepFigures& s : steps)
    if (s.name == "create" || s.name == "connect") ms += s.totalMs;
  return ms > 0 ? static_cast<double>(connections) / (ms / 1e3) : 0;
}

ConnectResult measureConnections(const ConnectParams& p) {
  if (p.connections < 1 || p.connections > kMaxConnections)
    throw UsageError(
        fmt::format("-n/--connections {}: out of range 1..{}", p.connections, kMaxConnections));
  Shared shared(p.connections);
  ConnectResult r;
  r.connections = p.connections;
  Side b(p, shared, false);
  std::thread other([&] { b.run(nullptr); });
  Side a(p, shared, true);
  a.run(&r.steps);
  other.join();
  if (shared.error) std::rethrow_exception(shared.error);
  r.device = shared.deviceA;
  return r;
}

std::string connectMethod(const std::string& transport, const transport::DeviceOptions& o) {
  if (transport == "verbs")
    return o.rdmaCm ? "RC QPs through rdma_cm (resolve address and route, connect / accept)"
                    : "RC QPs, addresses exchanged out of band, INIT -> RTR -> RTS";
  if (transport == "ofi")
    return o.endpointType == "msg"
               ? "FI_EP_MSG endpoints, fi_connect / fi_accept"
               : "FI_EP_RDM: fi_av_insert (a provider such as ofi_rxm connects at the first "
                 "message)";
  return "TCP connect / accept on " +
         (o.localHost.empty() ? std::string("127.0.0.1") : o.localHost);
}

}  // namespace rdmabench::connect
