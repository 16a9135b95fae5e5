/* OpenCANN: Ascend C's kernel interface (namespace AscendC), running natively
 * on the CPU. Include this from kernel sources as on the NPU; see
 * docs/ascendc.md for what is supported and what is checked. */
#ifndef OPENCANN_ASCENDC_KERNEL_OPERATOR_H_
#define OPENCANN_ASCENDC_KERNEL_OPERATOR_H_

#include "ascendc_cpu/base.h"
#include "ascendc_cpu/tensor.h"
#include "ascendc_cpu/pipe.h"
#include "ascendc_cpu/data_copy.h"
#include "ascendc_cpu/vector.h"
#include "ascendc_cpu/cast.h"
#include "ascendc_cpu/compare_reduce.h"
#include "ascendc_cpu/debug.h"
#include "ascendc_cpu/matmul.h"
#include "ascendc_cpu/launch.h"

/* The interface's earlier name. */
namespace tik2 = AscendC;

#endif  // OPENCANN_ASCENDC_KERNEL_OPERATOR_H_
