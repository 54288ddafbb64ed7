// A per-packet delay line on a TUN device: the latency half of a link emulator,
// because this kernel has no sch_netem (CONFIG_NET_SCH_NETEM unset; `tc qdisc add
// ... netem` answers "Specified qdisc kind is unknown"). The router namespace sends
// every packet between emulated hosts into the TUN device; this program holds it for
// the latency of the source host's uplink plus the destination host's downlink and
// writes it back, after which policy routing forwards it to the destination.
//
// Invariants:
// - a packet leaves no earlier than its arrival plus its pair's delay, and packets of
//   one (source, destination) pair leave in arrival order (equal delays, FIFO heap
//   ties broken by arrival sequence), so TCP sees no reordering;
// - nothing is dropped here; bandwidth caps and queue limits are tc tbf's job.
//
// Usage: delayline TUN_NAME HOST_INDEX:ONE_WAY_US ...
//   hosts are 198.18.HOST_INDEX.0/24; unknown hosts get no delay.
#define _GNU_SOURCE
#include <arpa/inet.h>
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
#include <time.h>
#include <unistd.h>

typedef struct {
  int64_t due_ns;
  uint64_t seq;
  size_t len;
  unsigned char* data;
} Packet;

static Packet* heap;
static size_t heap_len, heap_cap;
static int64_t host_delay_ns[256];
static volatile sig_atomic_t stop;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int before(const Packet* a, const Packet* b) {
  return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static void push(Packet p) {
  if (heap_len == heap_cap) {
    heap_cap = heap_cap ? 2 * heap_cap : 1024;
    heap = realloc(heap, heap_cap * sizeof(Packet));
    if (!heap) { perror("delayline: realloc"); exit(1); }
  }
  size_t i = heap_len++;
  heap[i] = p;
  while (i > 0 && before(&heap[i], &heap[(i - 1) / 2])) {
    Packet t = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static Packet pop(void) {
  Packet top = heap[0];
  heap[0] = heap[--heap_len];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_len && before(&heap[l], &heap[m])) m = l;
    if (r < heap_len && before(&heap[r], &heap[m])) m = r;
    if (m == i) break;
    Packet t = heap[i]; heap[i] = heap[m]; heap[m] = t;
    i = m;
  }
  return top;
}

// 198.18.H.x: host H's delay; anything else (not IPv4, other ranges): none.
static int64_t delay_of(const unsigned char* pkt, size_t len) {
  if (len < 20 || (pkt[0] >> 4) != 4) return 0;
  int64_t d = 0;
  if (pkt[12] == 198 && pkt[13] == 18) d += host_delay_ns[pkt[14]];
  if (pkt[16] == 198 && pkt[17] == 18) d += host_delay_ns[pkt[18]];
  return d;
}

static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TUN_NAME HOST_INDEX:ONE_WAY_US ...\n", argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    int host; long us;
    if (sscanf(argv[i], "%d:%ld", &host, &us) != 2 || host < 0 || host > 255 || us < 0) {
      fprintf(stderr, "delayline: bad host delay '%s' (want HOST_INDEX:ONE_WAY_US)\n", argv[i]);
      return 2;
    }
    host_delay_ns[host] = us * 1000;
  }
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  if (fd < 0) { perror("delayline: /dev/net/tun"); return 1; }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strncpy(ifr.ifr_name, argv[1], IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) { perror("delayline: TUNSETIFF"); return 1; }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  // Ready: the caller waits for this line before routing through the device.
  printf("ready %s\n", ifr.ifr_name);
  fflush(stdout);

  uint64_t seq = 0;
  unsigned char buf[65536];
  while (!stop) {
    // Microsecond timeouts (ppoll): poll's milliseconds would add up to 1 ms of jitter.
    struct timespec timeout, *tp = NULL;
    if (heap_len) {
      int64_t wait = heap[0].due_ns - now_ns();
      if (wait < 0) wait = 0;
      timeout.tv_sec = wait / 1000000000;
      timeout.tv_nsec = wait % 1000000000;
      tp = &timeout;
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    int rc = ppoll(&pfd, 1, tp, NULL);
    if (rc < 0 && errno != EINTR) { perror("delayline: poll"); return 1; }
    if (rc > 0) {
      for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0) break;
        Packet p = {now_ns() + delay_of(buf, (size_t)n), seq++, (size_t)n, malloc((size_t)n)};
        if (!p.data) { perror("delayline: malloc"); return 1; }
        memcpy(p.data, buf, (size_t)n);
        push(p);
      }
    }
    const int64_t now = now_ns();
    while (heap_len && heap[0].due_ns <= now) {
      Packet p = pop();
      // A full device queue drops the packet, as a real link would; TCP resends.
      if (write(fd, p.data, p.len) < 0 && errno != EAGAIN && errno != ENOBUFS)
        perror("delayline: write");
      free(p.data);
    }
  }
  return 0;
}
