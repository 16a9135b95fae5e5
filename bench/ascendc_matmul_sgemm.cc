// The project's own sgemm at one shape, timed as the Ascend C Matmul sample
// times itself (bench/ascendc_matmul_bench.py builds and runs both): SgemmPlan
// with the default micro-kernel on a ThreadPool of OPENCANN_NUM_THREADS
// threads (default 2), C = A * B + bias (per column), A and B row-major.
//   ascendc_matmul_sgemm M N K repeats   -> "sgemm: ... median X ms, Y GFLOP/s"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ops/cpu/gemm/gemm_kernel.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s M N K repeats\n", argv[0]);
    return 2;
  }
  const int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const int repeats = std::atoi(argv[4]);
  const char* t = std::getenv("OPENCANN_NUM_THREADS");
  const int threads = t && *t ? std::atoi(t) : 2;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> a(m * k), b(k * n), bias(n), c(m * n);
  for (auto& x : a) x = d(rng);
  for (auto& x : b) x = d(rng);
  for (auto& x : bias) x = d(rng);
  oc::ThreadPool pool(threads);
  const oc::gemm::GemmUkernel& uk = oc::gemm::DefaultUkernel();
  oc::gemm::SgemmPlan plan(uk, m, n, k, threads);
  oc::gemm::SgemmArgs g;
  g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n, g.c = c.data(), g.ldc = n;
  g.epilogue.bias_kind = oc::gemm::Epilogue::Bias::kPerCol;
  g.epilogue.bias = bias.data();
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    plan.Run(g, &pool);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double med = ms[ms.size() / 2];
  std::printf("sgemm (%s, %d threads): M %lld N %lld K %lld, median %.3f ms, %.1f GFLOP/s\n", uk.name, threads,
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), med,
              2.0 * m * n * k / (med * 1e6));
  return 0;
}
