// ApplyOutputFormula: the kernels (data_type.h) each output formula of a round runs
// (averaging_rule.h names the formulas; each rule picks one per round). Pure: buffers
// in, buffer out, so that every rule's output is unit-tested in every dtype
// (tests/output_formula_test.cc) without an engine.
#pragma once

#include <cstddef>

#include "rounds/averaging_rule.h"
#include "reduce/data_type.h"

namespace wagma {

// One round's operands, n elements each, in the stream's dtype.
struct OutputOperands {
  const void* m = nullptr;     // the mean over the included contributions
  const void* c = nullptr;     // this rank's counted contribution
  const void* x = nullptr;     // the app's input
  const void* base = nullptr;  // 'local': c plus the results applied since (nullptr: c)
  int g = 1;                   // contributions in m
};

// Writes y into `out` (which may be x's buffer). kMeanAlreadyInOutput writes nothing:
// the reduction put m there.
void ApplyOutputFormula(OutputFormula formula, DataType dtype, const OutputOperands& ops,
                        size_t n, void* out);

}  // namespace wagma
