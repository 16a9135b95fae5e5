/* The tiling add_tiled's host computes and its kernel reads. */
#pragma once
#include <cstdint>

struct AddTiling {
  uint32_t totalLength;  // elements of x, y and z
  uint32_t blockLength;  // elements per block (a multiple of 8: 32 bytes)
  uint32_t tileLength;   // elements per tile (a multiple of 8)
};

/* Splits n elements over blockDim blocks, tiles of at most `tile` elements. */
inline AddTiling ComputeAddTiling(uint32_t n, uint32_t blockDim, uint32_t tile) {
  uint32_t per = (n + blockDim - 1) / blockDim;
  per = (per + 7) / 8 * 8;
  tile = (tile + 7) / 8 * 8;
  return AddTiling{n, per, per < tile ? (per ? per : 8) : tile};
}
