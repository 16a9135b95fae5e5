// Static AIPP (atc --insert_op_conf): image preprocessing compiled into the
// model. The model input named by related_input_rank becomes a uint8 image;
// nodes in front of the original graph do what Ascend's AIPP unit does, in its
// order: channel swap -> crop -> colour-space conversion -> mean / min / scale
// -> NHWC to NCHW. See docs/aipp.md for the formats and the arithmetic.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "atc_flags.h"
#include "graph/graph.h"

namespace oc::atc {

struct AippConfig {
  int related_input_rank = 0;
  std::string input_format;  // RGB888_U8, YUV420SP_U8, YUV400_U8
  int src_image_size_w = 0, src_image_size_h = 0;  // 0: the model input's W / H
  bool crop = false;
  int load_start_pos_w = 0, load_start_pos_h = 0, crop_size_w = 0, crop_size_h = 0;
  bool csc_switch = false, rbuv_swap_switch = false;
  int matrix[3][3] = {{298, 516, 0}, {298, -100, -208}, {298, 0, 409}};
  bool matrix_set = false;  // a matrix_r*c* key was given (else the default follows input_format)
  int input_bias[3] = {16, 128, 128};
  int output_bias[3] = {16, 128, 128};
  float mean_chn[4] = {0, 0, 0, 0};
  float min_chn[4] = {0, 0, 0, 0};
  float var_reci_chn[4] = {1, 1, 1, 1};
};

// Reads the aipp_op blocks of an --insert_op_conf file.
std::optional<AtcError> ParseAippConfig(const std::string& path, std::vector<AippConfig>* out);

// Puts the preprocessing in front of the inputs the configs name (the graph's
// inputs must be static float32 NCHW tensors). Records "aipp" in the metadata.
std::optional<AtcError> InsertAipp(Graph& graph, const std::vector<AippConfig>& configs);

}  // namespace oc::atc
