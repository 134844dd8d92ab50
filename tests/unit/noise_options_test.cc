// `rdmabench noise` command line: defaults, and one-line usage errors naming option, value and
// limit.
#include <gtest/gtest.h>

#include "common/error.h"
#include "noise/options.h"

namespace rdmabench::noise {
namespace {

std::string usageError(const std::vector<std::string>& args) {
  try {
    parseNoiseCommand(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NoiseOptions, Defaults) {
  NoiseCommand c = parseNoiseCommand({});
  EXPECT_DOUBLE_EQ(c.config.durationSec, 10);
  EXPECT_DOUBLE_EQ(c.config.thresholdUs, 0);
  EXPECT_EQ(c.config.predictTimesUs, (std::vector<double>{20}));
  EXPECT_TRUE(c.config.pin);
  EXPECT_EQ(c.format, "table");
  EXPECT_FALSE(c.failOnOutlier);
}

TEST(NoiseOptions, Values) {
  NoiseCommand c = parseNoiseCommand({"-D", "1.5", "--threshold", "2", "--sample", "0", "--fwq",
                                      "100", "--predict-time", "8,20", "--predict-ranks", "1408",
                                      "--np", "2", "-f", "json", "--fail-on-outlier", "--no-pin"});
  EXPECT_DOUBLE_EQ(c.config.durationSec, 1.5);
  EXPECT_DOUBLE_EQ(c.config.thresholdUs, 2);
  EXPECT_DOUBLE_EQ(c.config.sampleSec, 0);
  EXPECT_DOUBLE_EQ(c.config.fwqUs, 100);
  EXPECT_EQ(c.config.predictTimesUs, (std::vector<double>{8, 20}));
  EXPECT_EQ(c.config.predictRanks, (std::vector<int>{1408}));
  EXPECT_EQ(c.launch.np, 2);
  EXPECT_EQ(c.format, "json");
  EXPECT_TRUE(c.failOnOutlier);
  EXPECT_FALSE(c.config.pin);
  // The run id covers the measurement, not the output.
  EXPECT_EQ(parseNoiseCommand({"-D", "2", "-f", "json"}).launch.defaultRunId,
            parseNoiseCommand({"-D", "2"}).launch.defaultRunId);
  EXPECT_NE(parseNoiseCommand({"-D", "2"}).launch.defaultRunId,
            parseNoiseCommand({"-D", "3"}).launch.defaultRunId);
}

TEST(NoiseOptions, BadInputNamesOptionValueAndLimit) {
  EXPECT_EQ(usageError({"--duration", "0"}), "--duration 0: out of range 0.1..86400 seconds");
  EXPECT_EQ(usageError({"--threshold", "0.01"}), "--threshold 0.01: out of range 0.05..1000000 us");
  EXPECT_EQ(usageError({"--sample", "0.05"}),
            "--sample 0.05: out of range 0 (start and end only) or 0.1..3600 seconds");
  EXPECT_EQ(usageError({"--fwq", "0"}), "--fwq 0: out of range 1..1000000 us");
  EXPECT_EQ(usageError({"--predict-ranks", "0"}), "--predict-ranks 0: out of range 1..100000000");
  EXPECT_EQ(usageError({"--predict-time", "1,2,3,4,5"}),
            "--predict-time 1,2,3,4,5: 5 values, at most 4");
  EXPECT_EQ(usageError({"-f", "osu"}), "--format osu: no noise layout (valid: table, json, csv)");
  EXPECT_EQ(usageError({"--plot", "x.jpg"}), "--plot x.jpg: must end in .png or .svg");
  // One line naming the option, the value and why, worded as every other command's.
  EXPECT_EQ(usageError({"--clock", "x"}), "--clock x: unknown clock (valid: auto, tsc, monotonic)");
  EXPECT_NE(usageError({"--duration", "abc"}).find("--duration 'abc'"), std::string::npos);
}

}  // namespace
}  // namespace rdmabench::noise
