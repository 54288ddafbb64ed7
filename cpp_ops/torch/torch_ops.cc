// PyTorch binding of the WAGMA engine: tensor in, handle out. Deliberately thin: the
// Python frontend stages non-contiguous and CUDA tensors through contiguous host
// tensors, so this file only maps dtypes and hands raw pointers to the engine.
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "c_api.h"

namespace {

constexpr int kErrLen = 2048;

int DtypeCode(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return 0;
    case at::kDouble: return 1;
    case at::kHalf: return 2;
    case at::kBFloat16: return 3;
    default:
      throw pybind11::type_error(std::string("group_allreduce supports float32, float64, "
                                             "float16 and bfloat16 tensors, got ") +
                                 c10::toString(t));
  }
}

void CheckHostContiguous(const torch::Tensor& t, const char* what) {
  TORCH_CHECK(t.device().is_cpu(), what, " must be a CPU tensor (stage CUDA tensors first)");
  TORCH_CHECK(t.is_contiguous(), what, " must be contiguous");
}

// `config`: (group_size, sync_period, averaging, wait_avoiding, global_rounds,
// max_staleness), the fields of wagma_stream_config in order.
int64_t Enqueue(const torch::Tensor& input, torch::Tensor output, const std::string& name,
                const std::vector<int>& config, const std::vector<int>& members) {
  CheckHostContiguous(input, "input");
  CheckHostContiguous(output, "output");
  const int dtype = DtypeCode(input.scalar_type());
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && output.sizes() == input.sizes(),
              "output must match the input's shape and dtype");
  TORCH_CHECK(config.size() == 6, "config must hold 6 ints");
  const wagma_stream_config c{config[0], config[1], config[2], config[3], config[4], config[5]};
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  char err[kErrLen] = {0};
  const int64_t h = wagma_enqueue(name.c_str(), dtype, static_cast<int>(shape.size()),
                                  shape.data(), input.data_ptr(), output.data_ptr(), &c,
                                  static_cast<int>(members.size()), members.data(), err,
                                  kErrLen);
  if (h == 0) throw std::runtime_error(err);
  return h;
}

bool Poll(int64_t handle) {
  const int state = wagma_poll(handle);
  if (state < 0) throw std::runtime_error("unknown handle " + std::to_string(handle));
  return state == 1;
}

// Returns the round that served the call.
int64_t Wait(int64_t handle) {
  char err[kErrLen] = {0};
  int64_t round = -1;
  while (true) {
    int rc;
    {
      pybind11::gil_scoped_release release;
      rc = wagma_wait_for(handle, 100, &round, err, kErrLen);
    }
    if (rc == 1) return round;
    if (rc < 0) throw std::runtime_error(err);
    // Between slices, let Python run its signal handlers: Ctrl-C must interrupt a
    // round that waits for a stuck peer.
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "WAGMA engine binding for PyTorch tensors";
  m.def("enqueue", &Enqueue, "Enqueue one group allreduce round; returns a handle");
  m.def("poll", &Poll, "True when the handle has completed");
  m.def("wait", &Wait, "Wait for the handle (GIL released); returns the round that served it, raises on error");
}
