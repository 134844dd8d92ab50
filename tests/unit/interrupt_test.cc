// common/interrupt: the Ctrl-C rules of docs/cli.md. One SIGINT sets the flag (the caller tears
// down and exits 4); the same SIGINT delivered twice at once (GNU timeout forwards it to its child
// and then to the child's process group) is still one request; a second Ctrl-C 250 ms or more
// later forces exit 130. Each case runs in a forked child (gtest death tests): the handlers and
// the flag are process-wide.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/interrupt.h"

namespace rdmabench {
namespace {

// In the child: 4 when interrupted() holds after the signals (the caller's clean exit), 0 when
// it does not; a forced exit shows as 130.
[[noreturn]] void exitAsTheToolWould() {
  _exit(interrupted() ? 4 : 0);
}

// installInterruptHandlers with SIGINT, SIGTERM and SIGHUP at their default first: a test binary
// started in the background of a script inherits SIGINT ignored, which the handlers keep.
void freshInstall() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    signal(sig, SIG_DFL);
  installInterruptHandlers();
}

TEST(InterruptDeathTest, SighupSetsTheFlagAndNamesSighup) {
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGHUP);  // the terminal hung up: teardown (the -o temporary file goes), exit 4
        if (std::string(interruptName()) != "SIGHUP" || interruptSignal() != SIGHUP) _exit(5);
        exitAsTheToolWould();
      },
      ::testing::ExitedWithCode(4), "");
}

TEST(InterruptDeathTest, AnInheritedIgnoredSigintStaysIgnored) {
  // `rdmabench server &` in a script: the shell starts it with SIGINT ignored, so the terminal's
  // Ctrl-C (meant for the foreground job) leaves it running; SIGTERM still stops it.
  EXPECT_EXIT(
      {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        installInterruptHandlers();
        raise(SIGINT);
        if (interrupted()) _exit(5);
        raise(SIGTERM);
        exitAsTheToolWould();
      },
      ::testing::ExitedWithCode(4), "");
}

TEST(InterruptDeathTest, OneSigintSetsTheFlagAndNamesCtrlC) {
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGINT);  // single-threaded: the handler has run when raise() returns
        if (std::string(interruptName()) != "Ctrl-C") _exit(5);
        exitAsTheToolWould();
      },
      ::testing::ExitedWithCode(4), "");
}

TEST(InterruptDeathTest, TheSameSigintDeliveredTwiceAtOnceIsOneRequest) {
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGINT);
        raise(SIGINT);  // timeout's direct and process-group copies
        exitAsTheToolWould();
      },
      ::testing::ExitedWithCode(4), "");
}

TEST(InterruptDeathTest, ASecondCtrlCLaterForcesExit130) {
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGINT);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        raise(SIGINT);
        _exit(0);  // not reached: the second Ctrl-C exits 130 from the handler
      },
      ::testing::ExitedWithCode(130), "");
}

TEST(InterruptDeathTest, SigtermAfterSigintIsNotASecondRequest) {
  // Under --np a terminal's Ctrl-C reaches every rank and the launcher then sends SIGTERM.
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGINT);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        raise(SIGTERM);
        exitAsTheToolWould();
      },
      ::testing::ExitedWithCode(4), "");
}

TEST(InterruptDeathTest, ClearedFlagStartsANewWindow) {
  // The server clears the flag after tearing an interrupted session down; the next SIGINT is a
  // first one again, even long after the old one.
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGINT);
        clearInterrupted();
        if (interrupted()) _exit(5);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        raise(SIGINT);
        raise(SIGINT);
        exitAsTheToolWould();
      },
      ::testing::ExitedWithCode(4), "");
}

// The transports' connect loops call throwIfConnectAborted on every turn; the installed check
// (the store's dead-rank check) runs at most every 100 ms, only while its scope lives, and what
// it throws comes out of the connect loop.
TEST(ConnectCheck, RunsEvery100MsWhileInstalledAndPropagates) {
  int runs = 0;
  {
    ScopedConnectCheck check([&] { ++runs; });
    for (int i = 0; i < 1000; ++i)
      throwIfConnectAborted("socket connect");
    EXPECT_EQ(runs, 1) << "rate limit";
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    throwIfConnectAborted("socket connect");
    EXPECT_EQ(runs, 2);
  }
  throwIfConnectAborted("socket connect");
  EXPECT_EQ(runs, 2) << "ran after its scope ended";
  ScopedConnectCheck failing([] { throw std::runtime_error("rank 2 on host n2 failed"); });
  EXPECT_THROW(throwIfConnectAborted("socket connect"), std::runtime_error);
}

// A forked rank of `--np` knows its launcher's pid: while the launcher is its parent nothing is
// said; once it is not (the launcher died and the rank was reparented), launcherDeath() and the
// interruption the kernel's PR_SET_PDEATHSIG SIGTERM causes both name it.
TEST(LauncherDeath, NamedOnlyWhenTheParentIsNoLongerTheLauncher) {
  EXPECT_EQ(launcherDeath(), "") << "no launcher set";
  setLauncherPid(static_cast<long>(getppid()));
  EXPECT_EQ(launcherDeath(), "");
  EXPECT_EQ(launcherDeath(20), "") << "waits, then still alive";
  const long gone = static_cast<long>(getppid()) + 1'000'000;  // never our parent
  setLauncherPid(gone);
  EXPECT_EQ(launcherDeath(), "launcher (pid " + std::to_string(gone) + ") died");
  EXPECT_EXIT(
      {
        freshInstall();
        raise(SIGTERM);
        try {
          throwIfInterrupted("size 8, measuring");
        } catch (const std::exception& e) {
          const std::string want = "launcher (pid " + std::to_string(gone) +
                                   ") died: interrupted (SIGTERM) during size 8, measuring";
          _exit(e.what() == want ? 0 : 1);
        }
        _exit(2);
      },
      ::testing::ExitedWithCode(0), "");
  setLauncherPid(0);
  EXPECT_EQ(launcherDeath(), "");
}

}  // namespace
}  // namespace rdmabench
