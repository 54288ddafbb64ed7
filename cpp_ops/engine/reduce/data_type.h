// Element types the engine reduces, and the arithmetic kernels over them.
//
// Invariant: every kernel sums its sources in the order given (member order), in the
// accumulation type (float for float32/float16/bfloat16, double for float64). Every
// rank that runs a kernel on the same bytes therefore gets the same bytes back, which
// is what makes global rounds bit-identical across ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace wagma {

enum class DataType : int32_t { kFloat32 = 0, kFloat64 = 1, kFloat16 = 2, kBFloat16 = 3 };

bool IsValidDataType(int32_t code);
size_t ElementSize(DataType dtype);
std::string DataTypeName(DataType dtype);

// dst[i] = mean over k of srcs[k][i], for i in [0, n).
void MeanOf(DataType dtype, const void* const* srcs, int num_srcs, size_t n, void* dst);

// Correction for a member whose contribution c was stale: y = m + (x - c) / divisor,
// where m is the group mean. divisor = g is the "fresh" rule, (s - c + x) / g with
// s = g * m; divisor = 1 is the "local" rule, which keeps all of the member's own
// progress since the value it contributed.
void FreshCorrection(DataType dtype, const void* m, const void* c, const void* x,
                     int divisor, size_t n, void* y);

// acc[i] += scale * a[i] (scale +1 or -1: the "local" rule's bookkeeping adds an app
// round's output and subtracts its input, in two passes when they share a buffer).
void AddScaled(DataType dtype, const void* a, int scale, size_t n, void* acc);

// "paper" rule: y = (g * m + x) / (g + 1).
void PaperAverage(DataType dtype, const void* m, const void* x, int group_size, size_t n,
                  void* y);

}  // namespace wagma
