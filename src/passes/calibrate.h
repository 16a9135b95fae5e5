// Post-training int8 quantization of a float32 graph from calibration samples.
//
// The graph is brought to the form the quantized ops see at run time (shapes
// inferred, constants folded, BatchNormalization folded into Conv, Gemm with
// constant weights split into MatMul + Add), then run in float32 over the
// samples while the range of every activation that enters or leaves a
// quantizable Conv / MatMul is recorded. QuantizeLinear/DequantizeLinear pairs
// are then inserted in QDQ form: activations per tensor, uint8 asymmetric;
// weights per output channel, int8 symmetric; Conv biases int32 at
// x_scale * w_scale. The compile pipeline's fuse-qdq pass turns each
// DQ -> Conv/MatMul [-> Relu] -> Q into QLinearConv / QLinearMatMul.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc::quant {

enum class CalibrationMethod { kMinMax, kPercentile };

// One float32 sample per graph input (in graph-input order, each
// input(i).ByteSize() bytes); `samples[s][i]`.
using CalibrationSet = std::vector<std::vector<std::vector<float>>>;

struct Int8Options {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  // kPercentile: the fraction of values kept inside the range at each end.
  double percentile = 99.99;
  // Optimisation passes switched off (CompileOptions::disabled_passes): the
  // preparation before calibration skips them as the pipeline will.
  std::vector<std::string> disabled_passes;
};

struct Int8Report {
  int quantized_ops = 0;      // Conv / MatMul given QDQ form
  int skipped_ops = 0;        // float Conv / MatMul / Gemm left in float32
  int quantized_tensors = 0;  // activations given a Q/DQ pair
  int samples = 0;
  // Float32 graph outputs over the samples, [sample][output] (for the
  // accuracy report after compiling the quantized graph).
  std::vector<std::vector<std::vector<float>>> reference_outputs;
};

// Makes a fresh copy of the model (the parser run again) for the float32
// calibration run, which compiles and executes it.
using GraphFactory = std::function<Expected<std::unique_ptr<Graph>>()>;

// Rewrites `graph` (freshly parsed, static shapes) into QDQ form calibrated
// on `samples`. Errors: dynamic shapes, samples of the wrong size, no samples.
Status QuantizeInt8(Graph& graph, const GraphFactory& fresh_copy, const CalibrationSet& samples,
                    const Int8Options& options, Int8Report* report);

// Reads a little-endian float32 (or float64, converted) C-order .npy file.
Status ReadNpyFloat(const std::string& path, std::vector<int64_t>* shape, std::vector<float>* data);

// Splits the arrays given per input into samples: an array of the input's
// shape is one sample; [N, ...shape] is N samples; an array whose leading dim
// is a multiple k of the input's (batch) is k samples. `arrays[i]` are the
// arrays for graph input i (several files: concatenated samples).
Expected<CalibrationSet> SplitSamples(const Graph& graph,
                                      const std::vector<std::vector<std::pair<std::vector<int64_t>,
                                                                              std::vector<float>>>>& arrays);

}  // namespace oc::quant
