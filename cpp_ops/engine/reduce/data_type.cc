#include "reduce/data_type.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WAGMA_HAVE_F16C_PATH 1
#endif

namespace wagma {
namespace {

// IEEE binary16 <-> float, round-to-nearest-even, with subnormals, inf and NaN.
inline float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    // value = m * 2^(e - 150); one half subnormal ulp is 2^-24, so shift by 126 - e.
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = absx - 0x38000000u;  // rebias exponent 127 -> 15
  uint32_t lsb = (r >> 13) & 1u;
  r += 0xfffu + lsb;
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

#ifdef WAGMA_HAVE_F16C_PATH
// Half conversions are the cost of fp16 rounds: the scalar code above is branchy.
// CPUs with F16C convert 8 values per instruction, with the same round-to-nearest-even
// result for every finite value (NaN payloads may differ; ranks of one job run on one
// kind of CPU, so results stay bit-identical across ranks).
bool HasF16C() {
  static const bool yes = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return yes;
}

__attribute__((target("avx,f16c"))) void HalfToFloatF16C(const uint16_t* s, size_t n,
                                                          float* d) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) d[i] = HalfToFloat(s[i]);
}

__attribute__((target("avx,f16c"))) void FloatToHalfF16C(const float* s, size_t n,
                                                          uint16_t* d) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  for (; i < n; ++i) d[i] = FloatToHalf(s[i]);
}
#endif

// Storage type T, accumulation type A, and block conversions between them.
template <class T, class A, A (*kLoad)(T), T (*kStore)(A)>
struct Scalar {
  using Storage = T;
  using Acc = A;
  static void LoadN(const T* s, size_t n, A* d) {
    for (size_t i = 0; i < n; ++i) d[i] = kLoad(s[i]);
  }
  static void StoreN(const A* s, size_t n, T* d) {
    for (size_t i = 0; i < n; ++i) d[i] = kStore(s[i]);
  }
};
template <class V> V Same(V v) { return v; }

struct F32 : Scalar<float, float, Same<float>, Same<float>> {};
struct F64 : Scalar<double, double, Same<double>, Same<double>> {};
struct BF16 : Scalar<uint16_t, float, BFloat16ToFloat, FloatToBFloat16> {};
struct F16 : Scalar<uint16_t, float, HalfToFloat, FloatToHalf> {
#ifdef WAGMA_HAVE_F16C_PATH
  static void LoadN(const uint16_t* s, size_t n, float* d) {
    if (HasF16C()) return HalfToFloatF16C(s, n, d);
    Scalar::LoadN(s, n, d);
  }
  static void StoreN(const float* s, size_t n, uint16_t* d) {
    if (HasF16C()) return FloatToHalfF16C(s, n, d);
    Scalar::StoreN(s, n, d);
  }
#endif
};

constexpr size_t kBlock = 1024;  // work in cache-sized blocks, in the accumulation type

// out[i] = v[i] / d (out may be v). For powers of two it multiplies by 1/d instead,
// several times faster: the reciprocal is exact, so the product is the same
// correctly rounded value. Other divisors divide, so that means of exact sums stay
// exactly representable.
template <class A>
inline void DivideInto(const A* v, size_t len, int d, A* out) {
  if ((d & (d - 1)) == 0) {
    const A inv = A(1) / A(d);
    for (size_t i = 0; i < len; ++i) out[i] = v[i] * inv;
  } else {
    for (size_t i = 0; i < len; ++i) out[i] = v[i] / A(d);
  }
}

// float and double need no conversion: sum straight from the sources, two passes
// per block instead of 2g + 2. Built for AVX2 too, picked at load time; no FMA
// contraction (-ffp-contract=off), so every build gives the same bits.
template <class A>
__attribute__((target_clones("avx2", "default")))
void MeanSameType(const void* const* srcs, int num_srcs, size_t n, void* dst) {
  A acc[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = std::min(kBlock, n - base);
    const A* s0 = static_cast<const A*>(srcs[0]) + base;
    if (num_srcs == 1) {
      for (size_t i = 0; i < len; ++i) acc[i] = s0[i];
    } else {
      const A* s1 = static_cast<const A*>(srcs[1]) + base;
      for (size_t i = 0; i < len; ++i) acc[i] = s0[i] + s1[i];
    }
    for (int k = 2; k < num_srcs; ++k) {
      const A* sk = static_cast<const A*>(srcs[k]) + base;
      for (size_t i = 0; i < len; ++i) acc[i] += sk[i];
    }
    // dst may alias a source: each block is read before it is written.
    DivideInto(acc, len, num_srcs, static_cast<A*>(dst) + base);
  }
}

template <class K>
__attribute__((target_clones("avx2", "default")))
void MeanImpl(const void* const* srcs, int num_srcs, size_t n, void* dst) {
  using T = typename K::Storage;
  using A = typename K::Acc;
  A acc[kBlock], tmp[kBlock];
  T* out = static_cast<T*>(dst);
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = std::min(kBlock, n - base);
    K::LoadN(static_cast<const T*>(srcs[0]) + base, len, acc);
    for (int k = 1; k < num_srcs; ++k) {
      K::LoadN(static_cast<const T*>(srcs[k]) + base, len, tmp);
      for (size_t i = 0; i < len; ++i) acc[i] += tmp[i];
    }
    DivideInto(acc, len, num_srcs, acc);
    K::StoreN(acc, len, out + base);
  }
}

template <class K>
__attribute__((target_clones("avx2", "default")))
void FreshImpl(const void* m, const void* c, const void* x, int divisor, size_t n, void* y) {
  using T = typename K::Storage;
  using A = typename K::Acc;
  A am[kBlock], ac[kBlock], ax[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = std::min(kBlock, n - base);
    K::LoadN(static_cast<const T*>(m) + base, len, am);
    K::LoadN(static_cast<const T*>(c) + base, len, ac);
    K::LoadN(static_cast<const T*>(x) + base, len, ax);
    for (size_t i = 0; i < len; ++i) ax[i] -= ac[i];
    DivideInto(ax, len, divisor, ax);
    for (size_t i = 0; i < len; ++i) am[i] += ax[i];
    K::StoreN(am, len, static_cast<T*>(y) + base);
  }
}

template <class K>
__attribute__((target_clones("avx2", "default")))
void AddScaledImpl(const void* a, int scale, size_t n, void* acc) {
  using T = typename K::Storage;
  using A = typename K::Acc;
  A aa[kBlock], ac[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = std::min(kBlock, n - base);
    K::LoadN(static_cast<const T*>(a) + base, len, aa);
    K::LoadN(static_cast<const T*>(acc) + base, len, ac);
    for (size_t i = 0; i < len; ++i) ac[i] += A(scale) * aa[i];
    K::StoreN(ac, len, static_cast<T*>(acc) + base);
  }
}

template <class K>
__attribute__((target_clones("avx2", "default")))
void PaperImpl(const void* m, const void* x, int g, size_t n, void* y) {
  using T = typename K::Storage;
  using A = typename K::Acc;
  A am[kBlock], ax[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = std::min(kBlock, n - base);
    K::LoadN(static_cast<const T*>(m) + base, len, am);
    K::LoadN(static_cast<const T*>(x) + base, len, ax);
    for (size_t i = 0; i < len; ++i) am[i] = A(g) * am[i] + ax[i];
    DivideInto(am, len, g + 1, am);
    K::StoreN(am, len, static_cast<T*>(y) + base);
  }
}

template <template <class> class F, class... Args>
void Dispatch(DataType dtype, Args... args) {
  switch (dtype) {
    case DataType::kFloat32: F<F32>::Run(args...); break;
    case DataType::kFloat64: F<F64>::Run(args...); break;
    case DataType::kFloat16: F<F16>::Run(args...); break;
    case DataType::kBFloat16: F<BF16>::Run(args...); break;
  }
}

template <class K> struct MeanOp {
  static void Run(const void* const* s, int k, size_t n, void* d) {
    if constexpr (std::is_same_v<typename K::Storage, typename K::Acc>) {
      MeanSameType<typename K::Acc>(s, k, n, d);
    } else {
      MeanImpl<K>(s, k, n, d);
    }
  }
};
template <class K> struct FreshOp {
  static void Run(const void* m, const void* c, const void* x, int d, size_t n, void* y) {
    FreshImpl<K>(m, c, x, d, n, y);
  }
};
template <class K> struct AddScaledOp {
  static void Run(const void* a, int scale, size_t n, void* acc) {
    AddScaledImpl<K>(a, scale, n, acc);
  }
};
template <class K> struct PaperOp {
  static void Run(const void* m, const void* x, int g, size_t n, void* y) {
    PaperImpl<K>(m, x, g, n, y);
  }
};

}  // namespace

bool IsValidDataType(int32_t code) { return code >= 0 && code <= 3; }

size_t ElementSize(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat64: return 8;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
  }
  return 0;
}

std::string DataTypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
  }
  return "unknown";
}

void MeanOf(DataType dtype, const void* const* srcs, int num_srcs, size_t n, void* dst) {
  Dispatch<MeanOp>(dtype, srcs, num_srcs, n, dst);
}

void FreshCorrection(DataType dtype, const void* m, const void* c, const void* x,
                     int divisor, size_t n, void* y) {
  Dispatch<FreshOp>(dtype, m, c, x, divisor, n, y);
}

void AddScaled(DataType dtype, const void* a, int scale, size_t n, void* acc) {
  Dispatch<AddScaledOp>(dtype, a, scale, n, acc);
}

void PaperAverage(DataType dtype, const void* m, const void* x, int group_size, size_t n,
                  void* y) {
  Dispatch<PaperOp>(dtype, m, x, group_size, n, y);
}

}  // namespace wagma
