/* leaky_relu_custom's tiling: totalLength must split into blockDim blocks of
 * tileNum * 2 tiles of whole 32-byte blocks (16 halves). */
#pragma once
#include <cstdint>

struct LeakyReluTiling {
  uint32_t totalLength;
  uint32_t tileNum;
  float alpha;
};
