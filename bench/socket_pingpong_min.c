/* Minimal TCP ping-pong on loopback, the hand-written loop rdmabench -t socket is compared with
 * (bench/socket_like_for_like.sh). Built outside the product: cc -O2 -o X socket_pingpong_min.c
 *
 *   socket_pingpong_min SIZE ITERS WARMUP busy|epoll
 * busy: non-blocking recv(MSG_DONTWAIT) spin; epoll: epoll_wait before each recv (sockperf's
 * default). One process forks the echo side. Prints the median one-way latency (RTT/2) in us
 * over ITERS iterations after WARMUP, timed with clock_gettime(CLOCK_MONOTONIC). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int useEpoll;

static void die(const char* what) {
  perror(what);
  exit(1);
}

static long long nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sendAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      die("send");
    }
    p += k;
    n -= (size_t)k;
  }
}

static void recvAll(int fd, int ep, char* p, size_t n) {
  while (n > 0) {
    if (useEpoll) {
      struct epoll_event ev;
      if (epoll_wait(ep, &ev, 1, 10000) <= 0) die("epoll_wait");
    }
    ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
    if (k == 0) {
      fprintf(stderr, "peer closed\n");
      exit(1);
    }
    if (k < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      die("recv");
    }
    p += k;
    n -= (size_t)k;
  }
}

static int cmpLL(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s SIZE ITERS WARMUP busy|epoll\n", argv[0]);
    return 2;
  }
  size_t size = (size_t)atol(argv[1]);
  long iters = atol(argv[2]), warmup = atol(argv[3]);
  useEpoll = strcmp(argv[4], "epoll") == 0;
  if (size == 0 || iters <= 0) return 2;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(ls, (struct sockaddr*)&a, sizeof a) || listen(ls, 1)) die("bind/listen");
  socklen_t al = sizeof a;
  getsockname(ls, (struct sockaddr*)&a, &al);
  pid_t child = fork();
  int fd;
  if (child == 0) {
    fd = accept(ls, NULL, NULL);
  } else {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr*)&a, sizeof a)) die("connect");
  }
  close(ls);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
  epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  char* buf = calloc(1, size);
  long total = iters + warmup;
  if (child == 0) {
    for (long i = 0; i < total; ++i) {
      recvAll(fd, ep, buf, size);
      sendAll(fd, buf, size);
    }
    return 0;
  }
  long long* s = malloc(sizeof(long long) * (size_t)iters);
  for (long i = 0; i < total; ++i) {
    long long t0 = nowNs();
    sendAll(fd, buf, size);
    recvAll(fd, ep, buf, size);
    long long t1 = nowNs();
    if (i >= warmup) s[i - warmup] = (t1 - t0) / 2;
  }
  waitpid(child, NULL, 0);
  qsort(s, (size_t)iters, sizeof s[0], cmpLL);
  printf("%.3f\n", (double)s[iters / 2] / 1000.0);
  return 0;
}
