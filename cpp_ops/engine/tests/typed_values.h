// Small integers written into and read out of any of the engine's dtypes, for unit
// tests that check kernels and reductions against exact values: every integer of
// magnitude <= 256 is exact in float16, bfloat16, float32 and float64 alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "reduce/data_type.h"

namespace wagma {
namespace typed {

const DataType kAllTypes[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                              DataType::kBFloat16};

// Encodes a small integer (|v| <= 256: exact in every dtype) as one element.
inline void Put(DataType dtype, double v, void* dst, size_t i) {
  switch (dtype) {
    case DataType::kFloat32: static_cast<float*>(dst)[i] = static_cast<float>(v); break;
    case DataType::kFloat64: static_cast<double*>(dst)[i] = v; break;
    case DataType::kFloat16: case DataType::kBFloat16: {
      // Through float32: float16 and bfloat16 hold these integers exactly.
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t half;
      if (dtype == DataType::kBFloat16) {
        half = static_cast<uint16_t>(bits >> 16);
      } else {
        // IEEE half from an integer-valued float of magnitude < 2048.
        const uint32_t sign = (bits >> 16) & 0x8000u;
        const int exp = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
        const uint32_t mant = (bits >> 13) & 0x3ffu;
        half = f == 0.0f ? static_cast<uint16_t>(sign)
                         : static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | mant);
      }
      std::memcpy(static_cast<char*>(dst) + 2 * i, &half, 2);
      break;
    }
  }
}

inline double Get(DataType dtype, const void* src, size_t i) {
  switch (dtype) {
    case DataType::kFloat32: return static_cast<const float*>(src)[i];
    case DataType::kFloat64: return static_cast<const double*>(src)[i];
    case DataType::kFloat16: case DataType::kBFloat16: {
      uint16_t half;
      std::memcpy(&half, static_cast<const char*>(src) + 2 * i, 2);
      uint32_t bits;
      if (dtype == DataType::kBFloat16) {
        bits = static_cast<uint32_t>(half) << 16;
      } else {
        const uint32_t sign = (half & 0x8000u) << 16;
        const uint32_t exp = (half >> 10) & 0x1fu;
        const uint32_t mant = half & 0x3ffu;
        bits = exp == 0 ? sign : sign | ((exp - 15 + 127) << 23) | (mant << 13);
      }
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
  return NAN;
}

}  // namespace typed
}  // namespace wagma
