// OC_CPU_RELAX(): the CPU's spin-wait hint (x86 PAUSE, Arm YIELD), for loops
// that poll memory another thread or process is about to write.
#pragma once

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#define OC_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define OC_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define OC_CPU_RELAX() ((void)0)
#endif
