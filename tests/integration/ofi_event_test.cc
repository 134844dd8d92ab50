// Event mode of the ofi backend (DeviceOptions::useEvent): the CQ gets an FI_WAIT_FD wait
// object and Device::waitForEvent sleeps in fi_trywait + poll() until a completion can be read.
// tcp;ofi_rxm on loopback ("lo"); a visible GTEST_SKIP where fi_getinfo does not offer it.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "transport/info_json.h"
#include "transport/transport.h"
#ifdef RDMABENCH_HAVE_OFI
#include "transport/backends.h"
#endif

namespace rdmabench::transport {
namespace {

#ifdef RDMABENCH_HAVE_OFI

constexpr int kWaitMs = 10'000;

// CPU time (user + system) of the calling thread, ms.
double threadCpuMs() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

std::unique_ptr<Device> openTcpRxm(bool useEvent) {
  DeviceOptions o;
  o.provider = "tcp;ofi_rxm";
  o.device = "lo";
  o.progress = useEvent ? ProgressMode::kEvent : ProgressMode::kBusyPoll;
  return ofi::openDevice(o);
}

TEST(OfiEvent, WaitSleepsWithoutTrafficAndWakesOnACompletion) {
  std::unique_ptr<Device> a, b;
  try {
    a = openTcpRxm(false);
    b = openTcpRxm(true);
  } catch (const TransportError& e) {
    GTEST_SKIP() << "tcp;ofi_rxm on lo is not usable here: " << e.what();
  }
  EXPECT_TRUE(toJson(b->info()).value("event_mode", false));
  EXPECT_FALSE(toJson(a->info()).value("event_mode", true));
  auto ca = a->createConnector();
  auto cb = b->createConnector();
  auto ab = ca->connect(cb->localAddress(), Deadline(kWaitMs));
  auto ba = cb->connect(ca->localAddress(), Deadline(kWaitMs));
  std::vector<uint8_t> bufA(4096), bufB(4096);
  auto ma = a->registerMemory(bufA.data(), bufA.size());
  auto mb = b->registerMemory(bufB.data(), bufB.size());

  // First message (rxm connects on demand), one thread polling both sides.
  ASSERT_EQ(ba->postRecv(*mb, 0, 64, 1), PostResult::kOk);
  Completion batch[8];
  Deadline connectDeadline(kWaitMs);
  bool posted = false, received = false;
  while (!received && !connectDeadline.expired()) {
    if (!posted) posted = ab->postSend(*ma, 0, 64, 2, true) == PostResult::kOk;
    a->poll(batch, 8);
    size_t n = b->poll(batch, 8);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(batch[i].ok()) << b->errorText(batch[i]);
      received = received || batch[i].context == 1;
    }
  }
  ASSERT_TRUE(received) << "first message never arrived";

  // Nothing in flight: a 300 ms wait sleeps (little CPU) and lasts about its timeout.
  double cpu0 = threadCpuMs();
  auto t0 = std::chrono::steady_clock::now();
  b->waitForEvent(300);
  double wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double cpuMs = threadCpuMs() - cpu0;
  EXPECT_GE(wallMs, 200.0) << "waitForEvent returned early without a completion";
  EXPECT_LT(cpuMs, 0.5 * wallMs) << "waitForEvent spun instead of sleeping";

  // A message sent 200 ms into a 5 s wait wakes the sleeper well before its timeout. The
  // waiting thread owns b, this thread owns a (a Device is used by one thread at a time).
  std::memset(bufA.data(), 0x5a, 64);
  ASSERT_EQ(ba->postRecv(*mb, 0, 64, 3), PostResult::kOk);
  Completion got{};
  size_t gotCount = 0;
  int waits = 0;
  double wakeMs = 0;
  std::thread waiter([&] {
    auto w0 = std::chrono::steady_clock::now();
    Completion wb[8];
    Deadline deadline(kWaitMs);
    while (gotCount == 0 && !deadline.expired()) {
      gotCount = b->poll(wb, 8);
      if (gotCount == 0) {
        b->waitForEvent(5000);
        ++waits;
      }
    }
    if (gotCount > 0) got = wb[0];
    wakeMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Deadline sendDeadline(kWaitMs);
  bool sent = false, sendDone = false;
  while (!sendDone && !sendDeadline.expired()) {  // a's progress (FI_PROGRESS_MANUAL)
    if (!sent) sent = ab->postSend(*ma, 0, 64, 4, true) == PostResult::kOk;
    size_t n = a->poll(batch, 8);
    for (size_t i = 0; i < n; ++i)
      sendDone = sendDone || batch[i].context == 4;
  }
  waiter.join();
  EXPECT_TRUE(sendDone);
  ASSERT_EQ(gotCount, 1u);
  EXPECT_EQ(got.context, 3u);
  EXPECT_TRUE(got.ok()) << b->errorText(got);
  EXPECT_EQ(bufB[0], 0x5a);
  EXPECT_GE(wakeMs, 150.0);
  EXPECT_LT(wakeMs, 2500.0) << "the completion did not wake waitForEvent (" << waits << " waits)";
}

#else

TEST(OfiEvent, NotBuilt) {
  GTEST_SKIP() << "built without libfabric (RDMABENCH_WITH_OFI=OFF)";
}

#endif

}  // namespace
}  // namespace rdmabench::transport
