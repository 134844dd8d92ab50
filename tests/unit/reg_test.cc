// `rdmabench reg` (lib/reg): the command line's refusals word for word, and the measurement's
// known answers on a counting device: every size registered warmup + iterations times with its
// own byte count, the region deregistered before the next registration, thp buffers on a 2 MiB
// boundary, a refused registration named with its size and the rows before it kept.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "fake_device.h"
#include "reg/options.h"
#include "reg/reg.h"

namespace rdmabench {
namespace {

std::string usage(const std::vector<std::string>& args) {
  try {
    reg::parseRegCommand(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(RegOptions, DefaultsAndValues) {
  const reg::RegCommand d = reg::parseRegCommand({"-t", "socket"});
  EXPECT_EQ(d.params.sizes.front(), 4096u);
  EXPECT_EQ(d.params.sizes.back(), 64u << 20);
  EXPECT_EQ(d.params.sizes.size(), 15u);  // 4K .. 64M
  EXPECT_EQ(d.params.iterations, 0u);
  EXPECT_EQ(d.params.warmup, 1u);
  EXPECT_EQ(d.params.pages, reg::Pages::kSmall);
  EXPECT_TRUE(d.params.prefault);
  const reg::RegCommand c = reg::parseRegCommand({"-t", "ofi", "--provider", "tcp;ofi_rxm", "-m",
                                                  "1M:4M", "-n", "7", "--warmup", "0", "--pages",
                                                  "thp", "--no-prefault", "-o", "/tmp/r.json"});
  EXPECT_EQ(c.params.sizes, (std::vector<uint64_t>{1u << 20, 2u << 20, 4u << 20}));
  EXPECT_EQ(c.params.iterations, 7u);
  EXPECT_EQ(c.params.warmup, 0u);
  EXPECT_EQ(c.params.pages, reg::Pages::kThp);
  EXPECT_FALSE(c.params.prefault);
  EXPECT_EQ(c.device.provider, "tcp;ofi_rxm");
  EXPECT_EQ(c.format, "json");  // from the -o suffix
  EXPECT_EQ(reg::defaultIterations(4096), 100u);
  EXPECT_EQ(reg::defaultIterations(4u << 20), 64u);
  EXPECT_EQ(reg::defaultIterations(1ull << 30), 5u);
}

TEST(RegOptions, RefusalsNameOptionValueAndLimit) {
  EXPECT_EQ(usage({"-t", "ofi", "--provider", ""}),
            "--provider '': empty provider string (an unset shell variable?); omit it for "
            "libfabric's default");
  EXPECT_EQ(usage({"--pages", "giant"}), "--pages giant: unknown (valid: small, huge, thp)");
  EXPECT_EQ(usage({"-t", "rdma"}), "-t/--transport rdma: unknown (valid: verbs, ofi, socket)");
  EXPECT_EQ(usage({"-t", "socket", "-d", "mlx5_0"}),
            "-d/--device mlx5_0: only for -t verbs or -t ofi; -t socket does not use it");
  EXPECT_EQ(usage({"-t", "socket", "-m", "0:4K"}),
            "-m/--msg-sizes 0:4K: 0 bytes cannot be registered (minimum 1)");
  EXPECT_EQ(usage({"-t", "socket", "-n", "0"}).rfind("-n/--iterations 0: ", 0), 0u);
  EXPECT_EQ(usage({"-t", "socket", "-f", "csv"}), "--format csv: reg supports table or json");
  // The format from -o's suffix (cli/command_options.h), or a refusal naming -o.
  EXPECT_EQ(usage({"-t", "socket", "-o", "r.csv"}),
            "-o/--output r.csv: reg writes table or json, not csv (give -f, or another name)");
  EXPECT_EQ(reg::parseRegCommand({"-t", "socket", "-o", "r.txt"}).format, "table");
  EXPECT_NE(usage({"-t", "socket", "-f", "table", "-o", "r.json"}), "");  // -f contradicts -o
  const std::string big = usage({"-t", "socket", "-m", "4K:4T"});
  EXPECT_NE(big.find("-m/--msg-sizes 4K:4T: 4398046511104 bytes is above the memory available ("),
            std::string::npos)
      << big;
}

// Counts registrations and checks that each region is gone before the next one comes.
class CountingDevice : public testing::FakeDevice {
 public:
  std::unique_ptr<transport::MemoryRegion> registerMemory(void* p, size_t n) override {
    EXPECT_EQ(live, 0) << "registered while the previous region is still registered";
    if (failAt && calls.size() + 1 == failAt) throw TransportError("ibv_reg_mr: Cannot allocate");
    calls.push_back({p, n});
    return std::make_unique<Region>(p, n, live);
  }
  struct Region : testing::FakeRegion {
    Region(void* p, size_t n, int& live) : FakeRegion(p, n), live_(live) { ++live_; }
    ~Region() override { --live_; }
    int& live_;
  };
  std::vector<std::pair<void*, size_t>> calls;
  int live = 0;
  size_t failAt = 0;  // 1-based call that throws; 0 = none
};

TEST(RegMeasure, EverySizeWarmupPlusIterationsTimesWithItsBytes) {
  CountingDevice dev;
  reg::RegParams p;
  p.sizes = {4096, 12288, 1 << 20};
  p.iterations = 3;
  p.warmup = 2;
  std::vector<reg::RegRow> rows;
  reg::measureRegistration(dev, p, [&](const reg::RegRow& r) { rows.push_back(r); });
  ASSERT_EQ(dev.calls.size(), 3u * 5u);
  for (size_t i = 0; i < dev.calls.size(); ++i)
    EXPECT_EQ(dev.calls[i].second, p.sizes[i / 5]);
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].bytes, p.sizes[i]);
    EXPECT_EQ(rows[i].iterations, 3u);
    EXPECT_EQ(rows[i].reg.count, 3u);  // the warmup is not in the figures
    EXPECT_EQ(rows[i].dereg.count, 3u);
    EXPECT_GE(rows[i].mappedBytes, rows[i].bytes);
    EXPECT_EQ(rows[i].mappedBytes % reg::pageBytes(reg::Pages::kSmall), 0u);
    EXPECT_GT(rows[i].regGBps, 0);
  }
  EXPECT_EQ(dev.live, 0);
}

TEST(RegMeasure, ThpBufferStartsOnAHugePageBoundary) {
  CountingDevice dev;
  reg::RegParams p;
  p.sizes = {3u << 20};
  p.iterations = 1;
  p.pages = reg::Pages::kThp;
  std::vector<reg::RegRow> rows;
  reg::measureRegistration(dev, p, [&](const reg::RegRow& r) { rows.push_back(r); });
  ASSERT_EQ(dev.calls.size(), 2u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dev.calls[0].first) % (2u << 20), 0u);
  EXPECT_EQ(rows.at(0).mappedBytes, 4u << 20);  // whole 2 MiB pages
}

TEST(RegMeasure, ARefusedRegistrationNamesItsSizeAndKeepsEarlierRows) {
  CountingDevice dev;
  dev.failAt = 4;  // the second size's first call
  reg::RegParams p;
  p.sizes = {4096, 8192};
  p.iterations = 2;
  p.warmup = 1;
  std::vector<reg::RegRow> rows;
  try {
    reg::measureRegistration(dev, p, [&](const reg::RegRow& r) { rows.push_back(r); });
    FAIL() << "no error";
  } catch (const TransportError& e) {
    EXPECT_STREQ(e.what(),
                 "registering 8192 bytes (small pages) on fake0: ibv_reg_mr: Cannot allocate");
  }
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_EQ(dev.live, 0);
}

}  // namespace
}  // namespace rdmabench
