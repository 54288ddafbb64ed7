// Unit test of the arithmetic kernels (data_type.h): the half types (float16,
// bfloat16) accumulate in float32, so sums past the half range stay finite and
// intermediate sums keep float32's precision; each kernel's formula holds. Built and
// run by `make engine-unit-test` (and `make test`).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "check.h"
#include "reduce/data_type.h"

namespace {

using wagma::DataType;

// Exact conversions for values a half type represents exactly (the test picks them
// so that no rounding is involved on the way in; the kernels' own outputs are
// compared with values chosen to be exact too).
uint16_t Half(float f) {
  if (f == 0) return 0;
  const uint16_t sign = f < 0 ? 0x8000 : 0;
  int exp = 0;
  const float m = std::frexp(std::fabs(f), &exp);  // f = m * 2^exp, m in [0.5, 1)
  const int e = exp - 1 + 15;                       // 1.x * 2^(exp-1)
  const auto mant = static_cast<uint16_t>((m * 2 - 1) * 1024);
  return static_cast<uint16_t>(sign | (e << 10) | mant);
}

float FromHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const float sign = (h & 0x8000) ? -1.f : 1.f;
  if (e == 0x1f) return mant ? NAN : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  return sign * std::ldexp(1.f + mant / 1024.f, e - 15);
}

uint16_t BFloat(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);  // exact for the values used
}

float FromBFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The mean of `values` stored in a half type (`encode`/`decode`), by MeanOf.
float MeanStored(DataType dtype, uint16_t (*encode)(float), float (*decode)(uint16_t),
                 const std::vector<float>& values) {
  std::vector<uint16_t> in;
  for (float v : values) in.push_back(encode(v));
  std::vector<const void*> srcs;
  for (const uint16_t& v : in) srcs.push_back(&v);
  uint16_t out = 0;
  wagma::MeanOf(dtype, srcs.data(), static_cast<int>(srcs.size()), 1, &out);
  return decode(out);
}

float MeanHalf(const std::vector<float>& values) {
  return MeanStored(DataType::kFloat16, Half, FromHalf, values);
}

float MeanBFloat(const std::vector<float>& values) {
  return MeanStored(DataType::kBFloat16, BFloat, FromBFloat, values);
}

void TestConverters() {
  CHECK(FromHalf(Half(30000.f)) == 30000.f);
  CHECK(FromHalf(Half(-1.5f)) == -1.5f);
  CHECK(FromHalf(0x7c00) == INFINITY);
  CHECK(FromBFloat(BFloat(256.f)) == 256.f);
}

// float16: 4 x 30000 sums to 120000, past the half maximum 65504. Summed in float32
// the mean is 30000; summed in the half type it would be inf.
void TestHalfSumPastItsRange() {
  CHECK(MeanHalf({30000, 30000, 30000, 30000}) == 30000.f);
  CHECK(MeanHalf({-30000, -30000, -30000}) == -30000.f);
}

// Precision of the intermediate sums: 2048 + 1 + 1 = 2050 in float32, mean 683.33,
// stored as the nearest half, 683.5. In halves, 2048 + 1 rounds back to 2048 (the
// spacing there is 2), twice, and the mean would be 682.5.
void TestHalfIntermediatePrecision() {
  CHECK(MeanHalf({2048, 1, 1}) == 683.5f);
  // bfloat16 (8 significant bits): 256 + 1 + 1 = 258, mean 86 exactly; in bfloat16
  // 256 + 1 rounds to 256 and the mean would be 85.5.
  CHECK(MeanBFloat({256, 1, 1}) == 86.f);
}

// The other kernels accumulate in float32 too: each intermediate below passes 65504.
void TestHalfCorrectionsInFloat32() {
  // "paper": (g m + x) / (g + 1) = (3 * 30000 + 30000) / 4.
  uint16_t m = Half(30000), x = Half(30000), y = 0;
  wagma::PaperAverage(DataType::kFloat16, &m, &x, 3, 1, &y);
  CHECK(FromHalf(y) == 30000.f);
  // "fresh"/"local" correction: m + (x - c) / d = 1024 + (32768 + 32768) / 4.
  uint16_t mm = Half(1024), c = Half(-32768), xx = Half(32768), out = 0;
  wagma::FreshCorrection(DataType::kFloat16, &mm, &c, &xx, 4, 1, &out);
  CHECK(FromHalf(out) == 17408.f);
  // AddScaled: acc += scale * a, here 2048 - 1 = 2047 (a half: the spacing below 2048
  // is 1).
  uint16_t acc = Half(2048), a = Half(1);
  wagma::AddScaled(DataType::kFloat16, &a, -1, 1, &acc);
  CHECK(FromHalf(acc) == 2047.f);
}

// float32 and float64 means, and the divisor that is not a power of two.
void TestFullPrecisionMeans() {
  const float f[3] = {1.f, 2.f, 4.f};
  const void* fs[3] = {&f[0], &f[1], &f[2]};
  float fo = 0;
  wagma::MeanOf(DataType::kFloat32, fs, 3, 1, &fo);
  CHECK(fo == 7.f / 3.f);
  const double d[4] = {1e300, 1e300, -1e300, 1.0};
  const void* ds[4] = {&d[0], &d[1], &d[2], &d[3]};
  double dout = 0;
  wagma::MeanOf(DataType::kFloat64, ds, 4, 1, &dout);
  CHECK(dout == (1e300 + 1.0) / 4);  // summed in member order: 1e300 + 1e300 - 1e300 + 1
}

// Long buffers cross the kernels' block boundary (1024 elements) without a seam.
void TestAcrossBlocks() {
  const size_t n = 2500;
  std::vector<uint16_t> a(n, Half(30000)), b(n, Half(30000)), out(n, 0);
  const void* srcs[2] = {a.data(), b.data()};
  wagma::MeanOf(DataType::kFloat16, srcs, 2, n, out.data());
  bool all = true;
  for (uint16_t v : out) all = all && FromHalf(v) == 30000.f;
  CHECK(all);
}

}  // namespace

int main() {
  TestConverters();
  TestHalfSumPastItsRange();
  TestHalfIntermediatePrecision();
  TestHalfCorrectionsInFloat32();
  TestFullPrecisionMeans();
  TestAcrossBlocks();
  return Report("data_type_test");
}
