// Throughput of the engine's averaging kernel (MeanOf): the arithmetic every group
// round does once its messages are in. Single-threaded, no MPI traffic.
//
//   make bench-kernel      (builds against horovod_wagma/lib/libwagma.so and runs)
//
// Prints, per dtype, group size g and element count, the time of one mean of g
// buffers (best of 7 batches) and the bytes moved per second ((g + 1) buffers: g read, one written).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "data_type.h"

using wagma::DataType;

int main() {
  const struct { DataType dtype; const char* name; } kinds[] = {
      {DataType::kFloat32, "float32"}, {DataType::kFloat16, "float16"}};
  std::printf("%-8s %2s %10s %12s %10s\n", "dtype", "g", "elements", "us/mean", "GB/s");
  for (const auto& kind : kinds) {
    const size_t esize = wagma::ElementSize(kind.dtype);
    for (int g : {2, 3, 4}) {
      for (size_t n : {size_t{1} << 10, size_t{1} << 14, size_t{1} << 18, size_t{1} << 22}) {
        std::vector<std::vector<char>> bufs(g, std::vector<char>(n * esize, 0));
        std::vector<char> out(n * esize);
        std::vector<const void*> srcs;
        for (auto& b : bufs) srcs.push_back(b.data());
        // Best of 7 batches: on a shared host the other batches carry interference.
        const int iters = static_cast<int>(20000000 / (n * g)) + 3;
        double us = 1e30;
        for (int batch = 0; batch < 7; ++batch) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < iters; ++i)
            wagma::MeanOf(kind.dtype, srcs.data(), g, n, out.data());
          us = std::min(us, std::chrono::duration<double, std::micro>(
                                std::chrono::steady_clock::now() - t0).count() / iters);
        }
        std::printf("%-8s %2d %10zu %12.2f %10.1f\n", kind.name, g, n, us,
                    (g + 1) * n * esize / us / 1e3);
      }
    }
  }
}
