// Does a thread that yields often get starved later? (docs/benchmarks.md, "The held
// slow rank"). Build and run:
//   gcc -O2 -pthread -o /tmp/yield_runaway lab/yield_runaway.c
//   /tmp/yield_runaway PROCS SECONDS PHASE_S BUSY_MS
// PROCS processes, each with the three threads of a WAGMA rank under Open MPI's
// yield_when_idle:
// - "engine": the engine thread under MPI: while rounds are in flight it passes with
//   no sleep, each pass's MPI_Improbe yielding once (opal_progress finding nothing);
//   idle, it sleeps 200 us between passes. Here: BUSY_MS of back-to-back yields, then
//   as long of idle passes, alternating; it records how long each yield took;
// - "app" and "horovod": for PHASE_S seconds they compute (a CPU-bound loop, the steps),
//   then for PHASE_S seconds they spin on sched_yield (the epoch-end allreduce:
//   Horovod's WaitAndClear and ompi_sync_wait_mt), alternating.
// Prints per process the engine's worst yield and how many took over 100 ms / 1 s.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double end_at, phase_s;

static void* spinner(void* arg) {
  (void)arg;
  volatile double x = 0;
  while (now() < end_at) {
    const int spinning = ((long)((now() - (end_at - 1e9)) / phase_s)) % 2;  // phase parity
    if (spinning) {
      sched_yield();
    } else {
      for (int i = 0; i < 20000; ++i) x += i * 1e-9;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  const int procs = argc > 1 ? atoi(argv[1]) : 8;
  const double seconds = argc > 2 ? atof(argv[2]) : 30;
  phase_s = argc > 3 ? atof(argv[3]) : 2;
  const double busy_s = (argc > 4 ? atof(argv[4]) : 0) / 1000;
  const double start = now();
  for (int p = 0; p < procs; ++p) {
    if (fork() == 0) {
      end_at = start + seconds;
      // The spinners' phase clock: counted from a common origin (end_at - 1e9).
      pthread_t app, hvd;
      pthread_create(&app, NULL, spinner, NULL);
      pthread_create(&hvd, NULL, spinner, NULL);
      struct timespec pause = {0, 200000};
      double worst = 0;
      long over_100ms = 0, over_1s = 0, passes = 0;
      double cycle = now();
      while (now() < end_at) {
        const double in_cycle = now() - cycle;
        if (in_cycle >= 2 * busy_s) cycle = now();
        if (busy_s == 0 || in_cycle >= busy_s) nanosleep(&pause, NULL);
        const double t = now();
        sched_yield();
        const double d = now() - t;
        if (d > worst) worst = d;
        over_100ms += d > 0.1;
        over_1s += d > 1.0;
        ++passes;
      }
      pthread_join(app, NULL);
      pthread_join(hvd, NULL);
      printf("proc %d: passes=%ld worst_yield=%.3f s over_100ms=%ld over_1s=%ld\n", p, passes,
             worst, over_100ms, over_1s);
      fflush(stdout);
      _exit(0);
    }
  }
  for (int p = 0; p < procs; ++p) wait(NULL);
  return 0;
}
