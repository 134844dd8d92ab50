// CPU / NUMA placement through hwloc: option checks, binding to --cpu / --numa N, keeping a
// launcher's binding under --numa auto, warnings when overriding it. Each binding test runs in
// its own thread so the test process keeps its affinity.
#include "common/placement.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <functional>
#include <thread>

#include "common/error.h"

namespace rdmabench {
namespace {

// Runs `fn` on a fresh thread (thread bindings die with it); rethrows its exception.
void onThread(const std::function<void()>& fn) {
  std::exception_ptr err;
  std::thread t([&] {
    try {
      fn();
    } catch (...) {
      err = std::current_exception();
    }
  });
  t.join();
  if (err) std::rethrow_exception(err);
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::vector<int> v;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) v.push_back(i);
  return v;
}

TEST(Placement, BadOptionsAreOneLineUsageErrors) {
  for (const char* bad : {"a", "1,", "-1", "1--2", ""}) {
    PlacementRequest r;
    r.cpus = bad;
    if (r.cpus.empty()) continue;  // "" = not given
    try {
      validatePlacement(r);
      ADD_FAILURE() << "accepted --cpu " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--cpu"), std::string::npos) << e.what();
    }
  }
  PlacementRequest r;
  r.numa = "near";
  EXPECT_THROW(validatePlacement(r), UsageError);
  r.numa = "0";
  r.cpus = "0";
  EXPECT_THROW(validatePlacement(r), UsageError);  // one of them
  r.cpus = "";
  EXPECT_NO_THROW(validatePlacement(r));
}

TEST(Placement, OffBindsNothing) {
  onThread([] {
    auto before = allowedCpus();
    PlacementRequest r;
    r.numa = "off";
    PlacementFacts f = applyPlacement(r, "no-such-device0");
    EXPECT_EQ(allowedCpus(), before);
    EXPECT_EQ(f.deviceNumaNode, -1);
    EXPECT_FALSE(f.cpus.empty());
    EXPECT_NE(f.source.find("--numa off"), std::string::npos) << f.source;
    EXPECT_EQ(f.toJson()["device_numa_node"], "unknown");
  });
}

TEST(Placement, CpuListBindsTheThread) {
  onThread([] {
    int cpu = allowedCpus().back();
    PlacementRequest r;
    r.cpus = std::to_string(cpu);
    PlacementFacts f = applyPlacement(r, "no-such-device0");
    EXPECT_EQ(f.cpus, std::to_string(cpu));
    EXPECT_EQ(allowedCpus(), std::vector<int>{cpu});
    EXPECT_EQ(sched_getcpu(), cpu);
    EXPECT_NE(f.source.find("--cpu"), std::string::npos);
    EXPECT_FALSE(f.cpuNumaNodes.empty());
  });
}

TEST(Placement, CpusThatAreNotAllowedAreRefused) {
  onThread([] {
    PlacementRequest r;
    r.cpus = "100000";
    try {
      applyPlacement(r, "x");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--cpu 100000: not within"), std::string::npos)
          << e.what();
    }
    r.cpus = "";
    r.numa = "999";
    EXPECT_THROW(applyPlacement(r, "x"), UsageError);
  });
}

TEST(Placement, NumaNodeZeroBindsToItsCpus) {
  onThread([] {
    PlacementRequest r;
    r.numa = "0";
    PlacementFacts f = applyPlacement(r, "x");
    EXPECT_EQ(f.cpuNumaNodes, "0");
    EXPECT_NE(f.source.find("NUMA node 0"), std::string::npos) << f.source;
  });
}

TEST(Placement, AutoKeepsALauncherBindingAndOverridesAreWarned) {
  auto cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs to tell a binding from none";
  onThread([&] {
    // What srun --cpu-bind / taskset would have done.
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus.front(), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    PlacementRequest r;  // --numa auto
    PlacementFacts f = applyPlacement(r, "x");
    EXPECT_EQ(f.cpus, std::to_string(cpus.front()));
    EXPECT_NE(f.source.find("inherited"), std::string::npos) << f.source;
    EXPECT_TRUE(f.warning.empty()) << f.warning;
    EXPECT_EQ(allowedCpus(), std::vector<int>{cpus.front()});
    // An explicit --cpu elsewhere wins, but says so.
    r.cpus = std::to_string(cpus.back());
    f = applyPlacement(r, "x");
    EXPECT_EQ(f.cpus, std::to_string(cpus.back()));
    EXPECT_NE(f.warning.find("overrides the binding the launcher set"), std::string::npos)
        << f.warning;
  });
}

}  // namespace
}  // namespace rdmabench
