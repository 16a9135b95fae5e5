// The machine's memory bandwidth for the traffic of the Ascend C benchmark
// kernels, measured the plainest way: `threads` threads each copying (or
// adding, z = x + y) their part of 64 MiB arrays with the C library / a
// vectorised loop; add_nt is STREAM's Add at its best on x86: AVX loads and
// non-temporal stores (no read-for-ownership of z). Prints the median GB/s
// (bytes read + written / time).
//   membw copy|add|add_nt|relu16 THREADS MIB REPEATS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__AVX__)
#include <immintrin.h>
#endif

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const char* what = argv[1];
  int threads = std::atoi(argv[2]);
  size_t bytes = size_t(std::atoi(argv[3])) << 20;
  int reps = std::atoi(argv[4]);
  size_t n = bytes / sizeof(float);
  auto* x = static_cast<float*>(std::aligned_alloc(64, bytes));
  auto* y = static_cast<float*>(std::aligned_alloc(64, bytes));
  auto* z = static_cast<float*>(std::aligned_alloc(64, bytes));
  for (size_t i = 0; i < n; ++i) x[i] = float(i % 7) - 3, y[i] = 1, z[i] = 0;
  bool add_nt = std::strcmp(what, "add_nt") == 0;
  bool add = add_nt || std::strcmp(what, "add") == 0, relu = std::strcmp(what, "relu16") == 0;
  std::vector<double> gbs;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        size_t b = n * t / threads, e = n * (t + 1) / threads;
        if (add_nt) {
          size_t i = b;
#if defined(__AVX__)
          for (; i < e && i % 8; ++i) z[i] = x[i] + y[i];
          for (; i + 8 <= e; i += 8) _mm256_stream_ps(z + i, _mm256_add_ps(_mm256_load_ps(x + i), _mm256_load_ps(y + i)));
          _mm_sfence();
#endif
          for (; i < e; ++i) z[i] = x[i] + y[i];
        } else if (add) {
          for (size_t i = b; i < e; ++i) z[i] = x[i] + y[i];
        } else if (relu) {  // the same bytes as a half LeakyReLU: read x, write z
          auto* xs = reinterpret_cast<_Float16*>(x);
          auto* zs = reinterpret_cast<_Float16*>(z);
          for (size_t i = 2 * b; i < 2 * e; ++i) zs[i] = xs[i] > 0 ? xs[i] : xs[i] * (_Float16)0.1f;
        } else {
          std::memcpy(z + b, x + b, (e - b) * sizeof(float));
        }
      });
    for (auto& t : ts) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gbs.push_back((add ? 3.0 : 2.0) * bytes / s / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  std::printf("%s %d threads %s MiB: %.2f GB/s\n", what, threads, argv[3], gbs[gbs.size() / 2]);
  std::free(x);
  std::free(y);
  std::free(z);
  return 0;
}
