// delay_line: a constant-delay wire between two TUN devices, for the latency known-answer test
// (tests/system/test_lat_delay.sh, issue #9). The host kernel has no sch_netem (and no sch_fq
// for an EDT delay), so this program plays netem's `delay` part: every IP packet read from one
// TUN device is written to the other one exactly DELAY_US microseconds later (FIFO per
// direction, no reordering, no jitter of its own beyond its wake-up latency: timer slack 1 ns,
// ppoll with a nanosecond timeout, then a short spin before each due packet).
//
//   delay_line TUN_A TUN_B DELAY_US
//
// Creates both TUN devices (IFF_TUN | IFF_NO_PI), prints "ready" on stdout once they exist (the
// caller then moves them into network namespaces and configures them), and forwards until
// SIGTERM / SIGINT. A full queue (4096 packets per direction) drops, as a real queue would.
// Test-only code: not part of the product.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { kQueue = 4096, kMaxPacket = 4096, kSpinNs = 60000 };

struct Packet {
  int64_t due;
  int len;
  unsigned char* data;
};

struct Direction {
  int in, out;
  struct Packet q[kQueue];
  int head, count;
  uint64_t forwarded, dropped;
};

static volatile sig_atomic_t stop;
static void onSignal(int sig) {
  (void)sig;
  stop = 1;
}

static int64_t nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int openTun(const char* name) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    perror("delay_line: open /dev/net/tun");
    exit(1);
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    fprintf(stderr, "delay_line: TUNSETIFF %s: %s\n", name, strerror(errno));
    exit(1);
  }
  return fd;
}

// Reads every packet waiting on d->in and queues it for now + delay.
static void intake(struct Direction* d, int64_t delayNs) {
  for (;;) {
    int slot = (d->head + d->count) % kQueue;
    if (d->count == kQueue) {
      unsigned char scratch[kMaxPacket];
      if (read(d->in, scratch, sizeof scratch) <= 0) return;
      ++d->dropped;
      continue;
    }
    ssize_t n = read(d->in, d->q[slot].data, kMaxPacket);
    if (n <= 0) return;  // EAGAIN: drained
    d->q[slot].len = (int)n;
    d->q[slot].due = nowNs() + delayNs;
    ++d->count;
  }
}

// Writes every queued packet that is due.
static void release(struct Direction* d, int64_t now) {
  while (d->count > 0 && d->q[d->head].due <= now) {
    if (write(d->out, d->q[d->head].data, (size_t)d->q[d->head].len) > 0) ++d->forwarded;
    d->head = (d->head + 1) % kQueue;
    --d->count;
  }
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: delay_line TUN_A TUN_B DELAY_US\n");
    return 2;
  }
  const int64_t delayNs = strtoll(argv[3], NULL, 10) * 1000;
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  signal(SIGTERM, onSignal);
  signal(SIGINT, onSignal);
  static struct Direction dir[2];
  int a = openTun(argv[1]), b = openTun(argv[2]);
  dir[0].in = a, dir[0].out = b;
  dir[1].in = b, dir[1].out = a;
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < kQueue; ++i)
      if (!(dir[k].q[i].data = malloc(kMaxPacket))) return 1;
  printf("ready\n");
  fflush(stdout);
  while (!stop) {
    int64_t now = nowNs();
    release(&dir[0], now);
    release(&dir[1], now);
    int64_t next = INT64_MAX;
    for (int k = 0; k < 2; ++k)
      if (dir[k].count > 0 && dir[k].q[dir[k].head].due < next) next = dir[k].q[dir[k].head].due;
    int64_t waitNs = next == INT64_MAX ? 100000000 : next - now - kSpinNs;
    if (waitNs < 0) waitNs = 0;  // close to a due packet: poll without sleeping (spin)
    struct pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    struct timespec ts = {waitNs / 1000000000, waitNs % 1000000000};
    int r = ppoll(p, 2, &ts, NULL);
    if (r < 0 && errno != EINTR) {
      perror("delay_line: ppoll");
      return 1;
    }
    if (r > 0) {
      if (p[0].revents & POLLIN) intake(&dir[0], delayNs);
      if (p[1].revents & POLLIN) intake(&dir[1], delayNs);
    }
  }
  fprintf(stderr, "delay_line: forwarded %llu + %llu packets, dropped %llu + %llu\n",
          (unsigned long long)dir[0].forwarded, (unsigned long long)dir[1].forwarded,
          (unsigned long long)dir[0].dropped, (unsigned long long)dir[1].dropped);
  return 0;
}
