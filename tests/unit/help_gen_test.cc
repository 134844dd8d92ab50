// One source for --help, man page, docs/cli.md and bash completion (cli/help_gen.h); typo
// suggestions; the option fixes of issue 21 (bw --op read, --cq-mod default, -s lists, -e).
#include "cli/help_gen.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>

#include "cli/coll_options.h"
#include "cli/options.h"
#include "common/error.h"

namespace rdmabench::cli {
namespace {

template <typename F>
std::string usageError(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::vector<CommandDoc> docs() {
  return {
      {"lat", "[HOST]", "latency", [] { return parseClientCommand("lat", {"--help"}).helpGroups; }},
      {"bw", "[HOST]", "bandwidth", [] { return parseClientCommand("bw", {"--help"}).helpGroups; }},
      {"allreduce", "", "allreduce",
       [] { return parseCollectiveCommand("allreduce", {"--help"}).helpGroups; }},
      {"ring", "", "ring", [] { return parseCollectiveCommand("ring", {"--help"}).helpGroups; }},
      {"version", "", "print the version", nullptr},
  };
}

TEST(HelpGen, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(editDistance("--sise", "--size"), 1u);
  EXPECT_EQ(editDistance("--szie", "--size"), 1u);  // adjacent transposition
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("lat", "lat"), 0u);
}

TEST(HelpGen, SuggestsNearestOrUniquePrefix) {
  const std::vector<std::string> cmds = {"lat", "bw", "server", "compare", "congestion", "pairs"};
  EXPECT_EQ(suggestions("lta", cmds), std::vector<std::string>{"lat"});
  EXPECT_EQ(suggestions("sever", cmds), std::vector<std::string>{"server"});
  EXPECT_EQ(suggestions("comp", cmds), std::vector<std::string>{"compare"});  // unique prefix
  EXPECT_TRUE(suggestions("co", cmds).empty());                               // two prefixes
  EXPECT_TRUE(suggestions("xyzzy", cmds).empty());
  // A spelled-out command starts with the short one; options keep the distance rule only.
  EXPECT_EQ(didYouMean("latency", cmds), "; did you mean 'lat'?");
  EXPECT_EQ(suggestions("serverd", cmds), std::vector<std::string>{"server"});
  EXPECT_TRUE(suggestions("bwtest", cmds).empty());  // "bw": too short to be a stem
  EXPECT_TRUE(suggestions("--sizeofall", {"--size", "-s"}).empty());
  EXPECT_EQ(didYouMean("pair", cmds), "; did you mean 'pairs'?");
  EXPECT_EQ(didYouMean("zzzzzz", cmds), "");
}

TEST(HelpGen, UnknownOptionSaysDidYouMean) {
  EXPECT_EQ(usageError([] {
              parseClientCommand("lat", {"--sise", "8"});
            }),
            "unknown option '--sise' for 'lat'; did you mean '--size'?");
  EXPECT_EQ(usageError([] {
              parseClientCommand("bw", {"--widnow", "8"});
            }),
            "unknown option '--widnow' for 'bw'; did you mean '--window'?");
  EXPECT_EQ(usageError([] {
              parseCollectiveCommand("allreduce", {"--algp", "ring"});
            }),
            "unknown option '--algp' for 'allreduce'; did you mean '--algo'?");
  EXPECT_EQ(usageError([] { parseServerCommand({"--onse"}); }),
            "unknown option '--onse' for 'server'; did you mean '--once'?");
  // Nothing close: point at --help instead.
  EXPECT_EQ(usageError([] { parseClientCommand("lat", {"--frobnicate"}); }),
            "unknown option '--frobnicate' for 'lat' (see `rdmabench lat --help`)");
  // The hidden positional (HOST) is never suggested.
  EXPECT_EQ(usageError([] {
              parseClientCommand("lat", {"--hots", "x"});
            }).find("--host"),
            std::string::npos);
}

TEST(HelpGen, OptionDocsCarryNamesValuesAndChoices) {
  const OptionGroups groups = parseClientCommand("bw", {"--help"}).helpGroups;
  ASSERT_EQ(groups.size(), 4u);
  std::map<std::string, OptionDoc> byName;
  for (const auto& g : groups)
    for (const auto& d : optionDocs(g))
      byName[d.longName] = d;
  EXPECT_EQ(byName["--size"].shortName, "-s");
  EXPECT_EQ(byName["--size"].valueName, "SIZE");
  EXPECT_EQ(byName["--transport"].choices, (std::vector<std::string>{"socket", "verbs", "ofi"}));
  EXPECT_EQ(byName["--op"].choices, (std::vector<std::string>{"send", "write", "read", "tagged"}));
  EXPECT_EQ(byName["--mode"].choices, (std::vector<std::string>{"window", "stream"}));
  EXPECT_EQ(byName["--format"].choices.size(), 6u);  // every report format
  EXPECT_TRUE(byName["--bidir"].valueName.empty());
  EXPECT_TRUE(byName["--use-event"].optionalValue);
  EXPECT_EQ(byName["--use-event"].choices, (std::vector<std::string>{"on", "off", "yield"}));
  EXPECT_EQ(byName.count("--host"), 0u);  // hidden positional
}

// The disagreements issue 21 listed, fixed in the one source.
TEST(HelpGen, HelpStatesWhatTheParserDoes) {
  // The help text with its line wrapping undone.
  auto flat = [](const std::string& text) {
    std::string out;
    for (char ch : text)
      if (!(std::isspace(static_cast<unsigned char>(ch)) && !out.empty() && out.back() == ' '))
        out += std::isspace(static_cast<unsigned char>(ch)) ? ' ' : ch;
    return out;
  };
  const std::string bw = flat(parseClientCommand("bw", {"--help"}).helpText);
  EXPECT_NE(bw.find("send | write | read | tagged"), std::string::npos) << bw;
  EXPECT_NE(bw.find("stream mode min(100, --tx-depth)"), std::string::npos) << bw;
  EXPECT_NE(bw.find("a comma list"), std::string::npos) << bw;
  // --op read parses for bw (the help said send | write | tagged).
  EXPECT_EQ(parseClientCommand("bw", {"--op", "read", "-t", "socket"}).client.spec.op,
            engine::Op::kRead);
  // --cq-mod: stream mode defaults to min(100, tx depth), window mode to 1, as the help says.
  EXPECT_EQ(
      parseClientCommand("bw", {"--mode", "stream", "--tx-depth", "64"}).client.spec.cqModeration,
      64u);
  EXPECT_EQ(parseClientCommand("bw", {"--mode", "stream"}).client.spec.cqModeration, 100u);
  EXPECT_EQ(parseClientCommand("bw", {}).client.spec.cqModeration, 1u);
  // -s takes a comma list in allreduce too.
  EXPECT_EQ(parseCollectiveCommand("allreduce", {"-s", "8,16"}).collectiveParams().sizes,
            (std::vector<uint64_t>{8, 16}));
  const std::string ar = flat(parseCollectiveCommand("allreduce", {"--help"}).helpText);
  EXPECT_NE(ar.find("a comma list"), std::string::npos) << ar;
}

TEST(HelpGen, UseEventIsAFlagOrOnOffYieldEverywhere) {
  using transport::ProgressMode;
  auto latMode = [](std::vector<std::string> args) {
    return parseClientCommand("lat", args).client.localDevice.progress;
  };
  EXPECT_EQ(latMode({"-e"}), ProgressMode::kEvent);
  EXPECT_EQ(latMode({"-e", "on"}), ProgressMode::kEvent);
  EXPECT_EQ(latMode({"--use-event", "off"}), ProgressMode::kBusyPoll);
  EXPECT_EQ(latMode({"-e", "yield"}), ProgressMode::kYield);
  EXPECT_EQ(latMode({"--use-event=yield"}), ProgressMode::kYield);
  EXPECT_EQ(latMode({}), ProgressMode::kBusyPoll);
  // The server side runs the client's mode (the test description carries it).
  EXPECT_EQ(parseClientCommand("bw", {"-e", "yield"}).client.spec.serverDevice.progress,
            ProgressMode::kYield);
  EXPECT_EQ(parseClientCommand("bw", {"-e"}).client.spec.serverDevice.progress,
            ProgressMode::kEvent);
  // `lat -e nodeA`: the word after a bare -e is the host.
  ClientCommand c = parseClientCommand("lat", {"-e", "nodeA"});
  EXPECT_EQ(c.client.host, "nodeA");
  EXPECT_EQ(c.client.localDevice.progress, ProgressMode::kEvent);
  EXPECT_NE(c.client.hostHint.find("takes only on, off or yield"), std::string::npos)
      << c.client.hostHint;
  // ... and may carry the port, as a positional HOST may (newcomer trial: "cannot resolve host
  // '127.0.0.1:18651'").
  c = parseClientCommand("lat", {"-e", "127.0.0.1:18651"});
  EXPECT_EQ(c.client.host, "127.0.0.1");
  EXPECT_EQ(c.client.port, 18651);
  c = parseClientCommand("bw", {"-e", "[::1]:18652"});
  EXPECT_EQ(c.client.host, "::1");
  EXPECT_EQ(c.client.port, 18652);
  c = parseClientCommand("lat", {"nodeA", "-e"});
  EXPECT_EQ(c.client.host, "nodeA");
  EXPECT_EQ(c.client.localDevice.progress, ProgressMode::kEvent);
  c = parseClientCommand("lat", {"nodeA", "-e", "yield"});
  EXPECT_EQ(c.client.host, "nodeA");
  EXPECT_EQ(c.client.localDevice.progress, ProgressMode::kYield);
  EXPECT_EQ(parseCollectiveCommand("barrier", {"-e"}).progress, ProgressMode::kEvent);
  EXPECT_EQ(parseCollectiveCommand("barrier", {"-e", "off"}).progress, ProgressMode::kBusyPoll);
  EXPECT_EQ(parseCollectiveCommand("barrier", {"--use-event=on"}).progress, ProgressMode::kEvent);
  EXPECT_EQ(parseCollectiveCommand("allreduce", {"-e", "yield"}).progress, ProgressMode::kYield);
  EXPECT_EQ(parseCollectiveCommand("ring", {"--use-event=yield"}).progress, ProgressMode::kYield);
  EXPECT_FALSE(parseCollectiveCommand("barrier", {}).progress.has_value());
  // The error names the option and the value, and the three values.
  EXPECT_NE(usageError([] {
              parseCollectiveCommand("ring", {"-e", "maybe"});
            }).find("--use-event maybe: must be on, off or yield (a bare -e means on)"),
            std::string::npos);
  EXPECT_NE(usageError([] {
              parseCollectiveCommand("pairs", {"--use-event=Yield"});
            }).find("--use-event Yield: must be on, off or yield"),
            std::string::npos);
  EXPECT_NE(usageError([] {
              parseClientCommand("lat", {"nodeA", "-e", "maybe"});
            }).find("--use-event maybe: must be on, off or yield"),
            std::string::npos);
}

TEST(HelpGen, RenderersWalkTheSameDescriptions) {
  const std::string md = renderMarkdown(docs());
  EXPECT_NE(md.find("<!-- BEGIN GENERATED: lat -->"), std::string::npos);
  EXPECT_NE(md.find("<!-- END GENERATED: ring -->"), std::string::npos);
  EXPECT_EQ(md.find("GENERATED: version"), std::string::npos);  // no options, no table
  EXPECT_NE(md.find("| `-e, --use-event [on\\|off\\|yield]` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `-t, --transport socket\\|verbs\\|ofi` |"), std::string::npos) << md;
  // ring's launch group is allreduce's: referred to, not repeated.
  EXPECT_NE(md.find("as for `allreduce`"), std::string::npos) << md;

  const std::string man = renderMan(docs(), "9.9.9");
  EXPECT_EQ(man.rfind(".TH RDMABENCH 1 \"\" \"rdmabench 9.9.9\"", 0), 0u);
  for (const char* s :
       {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH EXIT STATUS", ".SH ENVIRONMENT",
        ".SH EXAMPLES", ".SH SEE ALSO", ".SS \"rdmabench bw\"", ".B \\-s, \\-\\-size \\fISIZE\\fR"})
    EXPECT_NE(man.find(s), std::string::npos) << s;

  const std::string bash = renderBashCompletion(docs());
  EXPECT_NE(bash.find("complete -F _rdmabench rdmabench"), std::string::npos);
  EXPECT_NE(bash.find("    'bw --op')\n"), std::string::npos) << bash;
  EXPECT_NE(bash.find("'lat --size'|'lat -s')"), std::string::npos) << bash;
  EXPECT_NE(bash.find("compgen -W \"send write read tagged\""), std::string::npos) << bash;
  EXPECT_NE(bash.find("/sys/class/infiniband"), std::string::npos);

  const std::string help = renderHelp(parseClientCommand("lat", {"--help"}).helpGroups);
  EXPECT_EQ(help.rfind("Usage: rdmabench lat [HOST] [options]\n", 0), 0u) << help;
  EXPECT_NE(help.find("\nDevice / transport:\n"), std::string::npos) << help;
}

}  // namespace
}  // namespace rdmabench::cli
