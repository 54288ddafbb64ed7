#include "c_api.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "rounds/averaging_rule.h"
#include "core/engine.h"
#include "transport/gloo_transport.h"
#include "rounds/group_schedule.h"
#include "health/majority_rule.h"
#include "core/stream_spec.h"

using wagma::Engine;

namespace {

int SetError(char* err, int errlen, const std::string& text) {
  if (err && errlen > 0) {
    // Never cut a UTF-8 character: Python decodes this text.
    const std::string fit = wagma::Utf8Prefix(text, static_cast<size_t>(errlen) - 1);
    std::memcpy(err, fit.data(), fit.size());
    err[fit.size()] = '\0';
  }
  return text.empty() ? 0 : -1;
}

}  // namespace

extern "C" {

int wagma_start(char* err, int errlen) { return SetError(err, errlen, Engine::Get().Start()); }

int wagma_start_gloo(const wagma_gloo_spec* c, char* err, int errlen) {
  wagma::GlooSpec spec;
  spec.rank = c->rank;
  spec.size = c->size;
  spec.hostname = c->hostname ? c->hostname : "";
  spec.iface = c->iface ? c->iface : "";
  spec.prefix = c->prefix ? c->prefix : "";
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(c->timeout_s * 1000));
  const wagma_kv_set_fn set = c->set;
  const wagma_kv_get_fn get = c->get;
  spec.store.set = [set](const std::string& key, const std::vector<char>& value) {
    if (set(key.c_str(), value.data(), static_cast<int64_t>(value.size())) != 0)
      throw std::runtime_error("could not write '" + key + "' to the rendezvous store");
  };
  spec.store.get = [get](const std::string& key) {
    std::vector<char> value(256);
    for (;;) {
      const int64_t n = get(key.c_str(), value.data(), static_cast<int64_t>(value.size()));
      if (n < 0) throw std::runtime_error("'" + key + "' did not appear in the rendezvous store");
      if (static_cast<size_t>(n) <= value.size()) {
        value.resize(static_cast<size_t>(n));
        return value;
      }
      value.resize(static_cast<size_t>(n));
    }
  };
  return SetError(err, errlen, Engine::Get().Start([&spec](std::unique_ptr<wagma::Transport>* out) {
    return wagma::GlooTransport::Create(spec, out);
  }));
}
void wagma_shutdown(void) { Engine::Get().Shutdown(); }
void wagma_replace(void) { Engine::Replace(); }
void wagma_membership_changed(const char* args_json) {
  Engine::Get().MembershipChanged(args_json);
}
int wagma_may_go_on(int size, const int* lost, int n) {
  return wagma::MayGoOn(size, std::set<int>(lost, lost + n)) ? 1 : 0;
}
void wagma_shutdown_within(double timeout_s) { Engine::Get().Shutdown(timeout_s); }
int wagma_started(void) { return Engine::Get().started() ? 1 : 0; }
int wagma_rank(void) { return Engine::Get().rank(); }
int wagma_size(void) { return Engine::Get().size(); }
double wagma_verdict_delay_ms(void) {
  return Engine::Get().started() ? Engine::Get().VerdictDelayMs() : -1;
}

int wagma_default_group_size(int num_ranks) {
  return wagma::GroupSchedule::DefaultGroupSize(num_ranks);
}

int wagma_averaging_rule(int index, const char** name, int* code) {
  const std::vector<wagma::AveragingRule>& rules = wagma::AveragingRules();
  if (index < 0 || index >= static_cast<int>(rules.size())) return -1;
  *name = rules[index].name;
  *code = static_cast<int>(rules[index].code);
  return static_cast<int>(rules.size());
}

int wagma_schedule(int num_ranks, int group_size, int* out, int cap, char* err, int errlen) {
  try {
    const wagma::GroupSchedule& s = Engine::Get().ScheduleFor(num_ranks, group_size);
    const int L = s.num_phases();
    if (static_cast<long long>(L) * num_ranks > cap) {
      SetError(err, errlen, "schedule buffer too small");
      return -1;
    }
    for (int p = 0; p < L; ++p)
      for (size_t gi = 0; gi < s.groups(p).size(); ++gi)
        for (int r : s.groups(p)[gi]) out[p * num_ranks + r] = static_cast<int>(gi);
    return L;
  } catch (const std::exception& e) {
    SetError(err, errlen, e.what());
    return -1;
  }
}

namespace {

int64_t EnqueueImpl(const char* name, int dtype, int ndim, const int64_t* shape,
                    const void* input, void* output, const wagma_stream_config* config,
                    int num_members, const int* members,
                    wagma::HandleTable::Callback on_done, char* err, int errlen) {
  if (!wagma::IsValidDataType(dtype)) {
    SetError(err, errlen, "unsupported dtype code " + std::to_string(dtype));
    return 0;
  }
  if (config == nullptr) {
    SetError(err, errlen, "no stream configuration given");
    return 0;
  }
  wagma::StreamSpec spec;
  spec.name = name;
  spec.dtype = static_cast<wagma::DataType>(dtype);
  spec.shape.assign(shape, shape + ndim);
  spec.config.group_size = config->group_size;
  spec.config.sync_period = config->sync_period;
  spec.config.averaging = static_cast<wagma::Averaging>(config->averaging);
  spec.config.wait_avoiding = config->wait_avoiding != 0;
  spec.config.global_rounds = static_cast<wagma::GlobalRounds>(config->global_rounds);
  // Only wait-avoiding global rounds have a staleness bound: blocking streams must not
  // mismatch over a knob they do not use.
  spec.config.max_staleness = spec.config.wait_avoiding_global() ? config->max_staleness : 0;
  spec.members.assign(members, members + num_members);
  std::string error;
  try {
    const int64_t h = Engine::Get().Enqueue(spec, input, output, &error, std::move(on_done));
    if (h == 0) SetError(err, errlen, error);
    return h;
  } catch (const std::exception& e) {
    SetError(err, errlen, e.what());
    return 0;
  }
}

}  // namespace

int64_t wagma_enqueue(const char* name, int dtype, int ndim, const int64_t* shape,
                      const void* input, void* output, const wagma_stream_config* config,
                      int num_members, const int* members, char* err, int errlen) {
  return EnqueueImpl(name, dtype, ndim, shape, input, output, config, num_members, members,
                     nullptr, err, errlen);
}

int64_t wagma_enqueue_with_callback(const char* name, int dtype, int ndim,
                                    const int64_t* shape, const void* input, void* output,
                                    const wagma_stream_config* config, int num_members,
                                    const int* members, wagma_done_fn done, void* done_arg,
                                    char* err, int errlen) {
  auto on_done = [done, done_arg](const std::string& error, int64_t round) {
    done(done_arg, error.empty() ? nullptr : error.c_str(), error.empty() ? round : -1);
  };
  return EnqueueImpl(name, dtype, ndim, shape, input, output, config, num_members, members,
                     on_done, err, errlen);
}

int wagma_poll(int64_t handle) { return Engine::Get().Poll(handle); }

int wagma_wait(int64_t handle, char* err, int errlen) {
  return SetError(err, errlen, Engine::Get().Wait(handle));
}

int wagma_wait_for(int64_t handle, int timeout_ms, int64_t* round, char* err, int errlen) {
  std::string error;
  const int state = Engine::Get().WaitFor(handle, int64_t(timeout_ms) * 1000, &error, round);
  SetError(err, errlen, error);
  if (state < 0 || (state == 1 && !error.empty())) return -1;
  return state;
}

int wagma_join(int timeout_ms, char* err, int errlen) {
  std::string error;
  const int last = Engine::Get().JoinWait(int64_t(timeout_ms) * 1000, &error);
  SetError(err, errlen, error);
  return last;
}

int wagma_stats_json(char* out, int cap) {
  const std::string json = Engine::Get().StatsJson();
  if (out && cap > 0) {
    const size_t n = std::min(json.size(), static_cast<size_t>(cap) - 1);
    std::memcpy(out, json.data(), n);
    out[n] = '\0';
  }
  return static_cast<int>(json.size());
}

}  // extern "C"
