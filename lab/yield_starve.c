// Build and run: gcc -O2 -o /tmp/yield_starve lab/yield_starve.c && /tmp/yield_starve 14 yield 20
// (docs/benchmarks.md, "The held slow rank": measured worst 5 ms per call).
// N processes spin on sched_yield (as MPI's waits with yield_when_idle and Horovod's
// WaitAndClear do); one thread sleeps 1 ms, then does `yield` (sched_yield) or `sleep`
// (nanosleep 50 us) and records how long that call took; prints the max and the
// count over 1 s over `seconds` seconds.
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  int spinners=atoi(argv[1]); const char*mode=argv[2]; double seconds=atof(argv[3]);
  pid_t kids[256];
  for(int i=0;i<spinners;i++){ if((kids[i]=fork())==0){ double end=now()+seconds+1; while(now()<end) sched_yield(); _exit(0);} }
  double end=now()+seconds, worst=0; int over1=0, n=0;
  struct timespec ms={0,1000000}, us50={0,50000};
  while(now()<end){ nanosleep(&ms,NULL); double t=now();
    if(!strcmp(mode,"yield")) sched_yield(); else nanosleep(&us50,NULL);
    double d=now()-t; if(d>worst) worst=d; if(d>1.0) over1++; n++; }
  for(int i=0;i<spinners;i++) waitpid(kids[i],NULL,0);
  printf("%s spinners=%d calls=%d worst=%.3f s over_1s=%d\n",mode,spinners,n,worst,over1);
  return 0;
}
