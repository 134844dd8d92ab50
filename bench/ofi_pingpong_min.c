/* Minimal busy-poll libfabric ping-pong (FI_EP_RDM, fi_send / fi_recv, fi_cq_read spin) on
 * loopback: the hand-written loop `rdmabench lat -t ofi` is compared with
 * (bench/ofi_like_for_like.sh, issue #10). Built outside the product:
 *   cc -O2 -o X ofi_pingpong_min.c -lfabric
 *
 *   ofi_pingpong_min PROVIDER SIZE ITERS WARMUP
 * One process forks the echo side; the two exchange endpoint names over a socketpair. Each side
 * keeps one receive posted; the client times post-send -> receive-completion with
 * clock_gettime(CLOCK_MONOTONIC) and prints the median one-way latency (RTT/2) in us over ITERS
 * iterations after WARMUP. No memory registration (mr_mode 0: tcp;ofi_rxm needs none). */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct fid_cq* cq;
static struct fid_ep* ep;
static fi_addr_t peer;
static char* buf;
static size_t size;
static long recvDone, sendDone;
static int rctx, sctx;

static void ck(long rc, const char* what) {
  if (rc) {
    fprintf(stderr, "%s: %s\n", what, fi_strerror((int)-rc));
    exit(1);
  }
}

static long long nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pollCq(void) {
  struct fi_cq_entry e[8];
  ssize_t n = fi_cq_read(cq, e, 8);
  if (n == -FI_EAGAIN) return;
  if (n < 0) {
    struct fi_cq_err_entry err = {0};
    fi_cq_readerr(cq, &err, 0);
    fprintf(stderr, "completion error: %s\n", fi_strerror(err.err));
    exit(1);
  }
  for (ssize_t i = 0; i < n; ++i) {
    if (e[i].op_context == &rctx)
      ++recvDone;
    else
      ++sendDone;
  }
}

static void postRecv(void) {
  ssize_t rc;
  while ((rc = fi_recv(ep, buf + size, size, NULL, FI_ADDR_UNSPEC, &rctx)) == -FI_EAGAIN) pollCq();
  ck(rc, "fi_recv");
}

static void postSend(void) {
  ssize_t rc;
  while ((rc = fi_send(ep, buf, size, NULL, peer, &sctx)) == -FI_EAGAIN) pollCq();
  ck(rc, "fi_send");
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s PROVIDER SIZE ITERS WARMUP\n", argv[0]);
    return 2;
  }
  const char* prov = argv[1];
  size = strtoul(argv[2], NULL, 10);
  long iters = strtol(argv[3], NULL, 10), warmup = strtol(argv[4], NULL, 10);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return perror("socketpair"), 1;
  pid_t child = fork();
  int me = child == 0 ? sv[1] : sv[0];

  struct fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->mode = 0;
  hints->domain_attr->mr_mode = 0;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->fabric_attr->prov_name = strdup(prov);
  struct fi_info* info;
  ck(fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", NULL, FI_SOURCE, hints, &info), "fi_getinfo");
  struct fid_fabric* fab;
  struct fid_domain* dom;
  struct fid_av* av;
  ck(fi_fabric(info->fabric_attr, &fab, NULL), "fi_fabric");
  ck(fi_domain(fab, info, &dom, NULL), "fi_domain");
  struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .size = 64, .wait_obj = FI_WAIT_NONE};
  ck(fi_cq_open(dom, &cqa, &cq, NULL), "fi_cq_open");
  struct fi_av_attr ava = {.type = FI_AV_TABLE};
  ck(fi_av_open(dom, &ava, &av, NULL), "fi_av_open");
  ck(fi_endpoint(dom, info, &ep, NULL), "fi_endpoint");
  ck(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind av");
  ck(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
  ck(fi_enable(ep), "fi_enable");
  char name[256], pname[256];
  size_t len = sizeof name;
  ck(fi_getname(&ep->fid, name, &len), "fi_getname");
  if (write(me, &len, sizeof len) != sizeof len || write(me, name, len) != (ssize_t)len ||
      read(me, &len, sizeof len) != sizeof len || len > sizeof pname ||
      read(me, pname, len) != (ssize_t)len)
    return perror("name exchange"), 1;
  if (fi_av_insert(av, pname, 1, &peer, 0, NULL) != 1) return fprintf(stderr, "fi_av_insert\n"), 1;
  buf = calloc(2, size ? size : 1);

  long total = warmup + iters;
  postRecv();
  if (child == 0) {  // echo side
    for (long i = 0; i < total; ++i) {
      while (recvDone <= i) pollCq();
      postRecv();
      postSend();
    }
    while (sendDone < total) pollCq();
    char done;
    if (read(me, &done, 1) != 1) return 1;  // the client has its last reply: close after it
    return 0;
  }
  double* us = malloc(sizeof(double) * (size_t)(iters ? iters : 1));
  for (long i = 0; i < total; ++i) {
    long long t0 = nowNs();
    postSend();
    while (recvDone <= i) pollCq();
    long long t1 = nowNs();
    postRecv();
    if (i >= warmup) us[i - warmup] = (double)(t1 - t0) / 2000.0;
  }
  while (sendDone < total) pollCq();
  if (write(me, "x", 1) != 1) return 1;
  waitpid(child, NULL, 0);
  qsort(us, (size_t)iters, sizeof(double), cmp);
  printf("%.3f\n", iters % 2 ? us[iters / 2] : (us[iters / 2 - 1] + us[iters / 2]) / 2);
  return 0;
}
