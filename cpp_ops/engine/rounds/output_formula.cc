#include "rounds/output_formula.h"

#include <cstring>

namespace wagma {

void ApplyOutputFormula(OutputFormula formula, DataType dtype, const OutputOperands& ops,
                        size_t n, void* out) {
  const size_t bytes = n * ElementSize(dtype);
  switch (formula) {
    case OutputFormula::kMeanAlreadyInOutput:
      break;
    case OutputFormula::kMean:
      if (out != ops.m) std::memcpy(out, ops.m, bytes);
      break;
    case OutputFormula::kPaper:
      PaperAverage(dtype, ops.m, ops.x, ops.g, n, out);
      break;
    case OutputFormula::kFreshCorrection:
      FreshCorrection(dtype, ops.m, ops.c, ops.x, ops.g, n, out);
      break;
    case OutputFormula::kContributionDelta:
      FreshCorrection(dtype, ops.m, ops.c, ops.x, 1, n, out);
      break;
    case OutputFormula::kInput:
      if (out != ops.x) std::memcpy(out, ops.x, bytes);
      break;
    case OutputFormula::kLocalCorrection:
      // The member takes the mean and keeps its own progress since the value its
      // engine held, without the corrections it already applied since.
      FreshCorrection(dtype, ops.m, ops.base != nullptr ? ops.base : ops.c, ops.x, 1, n, out);
      break;
  }
}

}  // namespace wagma
