/* CANN's include for the Matmul high-level API; here it is part of
 * kernel_operator.h (ascendc_cpu/matmul.h). */
#ifndef OPENCANN_ASCENDC_LIB_MATMUL_INTF_H_
#define OPENCANN_ASCENDC_LIB_MATMUL_INTF_H_
#include "kernel_operator.h"
#endif  // OPENCANN_ASCENDC_LIB_MATMUL_INTF_H_
