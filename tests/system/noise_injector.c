// Deterministic OS noise for tests/system/test_noise*.sh: pinned to one CPU under its own
// process name, it runs WORK_US of CPU time every PERIOD_US (absolute periods, so the rate holds
// whatever the scheduler does) for SECONDS, then exits. Prints "ready PID" once pinned.
// Usage: noise_injector CPU WORK_US PERIOD_US SECONDS [NAME]
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s CPU WORK_US PERIOD_US SECONDS [NAME]\n", argv[0]);
    return 2;
  }
  const int cpu = atoi(argv[1]);
  const long long work = atoll(argv[2]) * 1000LL, period = atoll(argv[3]) * 1000LL;
  const double seconds = atof(argv[4]);
  if (work <= 0 || period <= work || seconds <= 0) {
    fprintf(stderr, "noise_injector: need 0 < WORK_US < PERIOD_US and SECONDS > 0\n");
    return 2;
  }
  prctl(PR_SET_NAME, argc > 5 ? argv[5] : "rbnoiseinj", 0, 0, 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("noise_injector: sched_setaffinity");
    return 1;
  }
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  const long long start = ns(CLOCK_MONOTONIC), end = start + (long long)(seconds * 1e9);
  long long next = start;
  volatile unsigned long long sink = 0;
  while (next < end) {
    const long long cpu0 = ns(CLOCK_THREAD_CPUTIME_ID);
    while (ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < work)
      sink++;
    next += period;
    struct timespec ts = {(time_t)(next / 1000000000LL), (long)(next % 1000000000LL)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
  }
  return 0;
}
