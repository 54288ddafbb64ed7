// The engine's C interface: what framework bindings and Python (ctypes) call.
// Every function that can fail returns an error text through (err, errlen).
#pragma once

#include <cstdint>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int wagma_start(char* err, int errlen);  // 0 on success, over MPI
// Over Gloo (horovodrun --gloo, Horovod elastic): the launcher's key-value store is
// reached through two callbacks. `get` blocks until the key exists; it returns the
// value's length (when > cap, the engine calls again with a larger buffer), or -1
// when the key did not appear in time. `set` returns 0, or -1 on failure.
typedef int (*wagma_kv_set_fn)(const char* key, const char* value, int64_t len);
typedef int64_t (*wagma_kv_get_fn)(const char* key, char* out, int64_t cap);
typedef struct wagma_gloo_spec {
  int rank;
  int size;
  const char* hostname;  // the launcher's name of this rank's host
  const char* iface;     // network interface to bind; "" lets Gloo pick by host name
  const char* prefix;    // key prefix in the store, one per job (and membership)
  double timeout_s;      // rendezvous and start-up collectives
  wagma_kv_set_fn set;
  wagma_kv_get_fn get;
} wagma_gloo_spec;
int wagma_start_gloo(const wagma_gloo_spec* spec, char* err, int errlen);
// Horovod elastic: ends the engine at once and installs a fresh one, which a later
// wagma_start_gloo starts over the new member set (rank and size may change).
void wagma_replace(void);
// The majority rule (majority_rule.h): 1 when the side that lost `lost` (n ranks of a
// member set of `size`) may go on, 0 when it is fenced.
int wagma_may_go_on(int size, const int* lost, int n);
// Records on the timeline (if on) the membership change that formed the running
// engine's member set: `args_json` is the body of a JSON object, without braces.
void wagma_membership_changed(const char* args_json);
void wagma_shutdown(void);
// Shutdown that gives up on unfinished rounds after `timeout_s` (e.g. when the process
// is exiting on an error: its peers learn from the goodbye at once).
void wagma_shutdown_within(double timeout_s);
int wagma_started(void);
int wagma_rank(void);
int wagma_size(void);
// Under Horovod elastic, milliseconds from a first lost peer to the membership verdict;
// -1 otherwise (or before the engine started).
double wagma_verdict_delay_ms(void);
int wagma_default_group_size(int num_ranks);
// Writes phase-major group indices (out[p * P + r] = index of r's group in phase p) and
// returns the number of phases, or -1 on error (also when cap is too small).
int wagma_schedule(int num_ranks, int group_size, int* out, int cap, char* err, int errlen);
// The averaging rules (averaging_rule.h): the name and code of rule `index`, 0 to
// n - 1 in code order; returns n, or -1 when `index` is past the last (name untouched).
int wagma_averaging_rule(int index, const char** name, int* code);
// A stream's knobs, as StreamConfig (stream_spec.h) holds them. Every rank must pass
// the same for a stream; round 0 checks that they do.
typedef struct wagma_stream_config {
  int group_size;     // S >= 2
  int sync_period;    // tau
  int averaging;      // a rule's code (wagma_averaging_rule)
  int wait_avoiding;  // group rounds: 1 wait-avoiding, 0 wait for every member
  int global_rounds;  // 0 blocking, 1 wait-avoiding
  int max_staleness;  // rounds; wait-avoiding global rounds only (ignored otherwise)
} wagma_stream_config;

// Returns a handle > 0, or 0 with err set. `input` and `output` must stay valid (and
// the input unchanged) until the handle completes.
// `members` lists the world ranks of the stream's process set (sorted); none = all.
int64_t wagma_enqueue(const char* name, int dtype, int ndim, const int64_t* shape,
                      const void* input, void* output, const wagma_stream_config* config,
                      int num_members, const int* members, char* err, int errlen);
// As wagma_enqueue, but instead of a handle to poll or wait on, `done(done_arg, error,
// round)` runs once when the round completes (error NULL on success; `round` is the
// round the call was served by, -1 on error), on the engine's thread: it must be
// quick and must not call wagma_wait. Returns > 0, or 0 with err set (then `done` is
// never called).
typedef void (*wagma_done_fn)(void* arg, const char* error, int64_t round);
int64_t wagma_enqueue_with_callback(const char* name, int dtype, int ndim,
                                    const int64_t* shape, const void* input, void* output,
                                    const wagma_stream_config* config, int num_members,
                                    const int* members, wagma_done_fn done, void* done_arg,
                                    char* err, int errlen);
int wagma_poll(int64_t handle);                      // -1 unknown, 0 pending, 1 done
int wagma_wait(int64_t handle, char* err, int errlen);  // 0 on success
// Waits at most timeout_ms: 1 done (0-length err on success), 0 still pending, -1
// error (err set). Bindings loop over it so that signals reach the interpreter. On
// success *round (if not NULL) is the round that served the call: with wait-avoiding
// global rounds a lagging app may skip rounds its engine already served, so this can
// be later than the number of calls made before.
int wagma_wait_for(int64_t handle, int timeout_ms, int64_t* round, char* err, int errlen);
// join(): the first call starts it. Returns the last rank to join once every rank has,
// -2 while still waiting after timeout_ms, -1 with err set on failure.
int wagma_join(int timeout_ms, char* err, int errlen);
// Engine counters and per-stream statistics as JSON; returns the length needed (call
// again with a larger buffer when it is >= cap).
int wagma_stats_json(char* out, int cap);

#ifdef __cplusplus
}
#endif
