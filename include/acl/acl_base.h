/*
 * OpenCANN: base types of the AscendCL-compatible C API.
 *
 * Names, values and signatures follow Huawei CANN's public AscendCL interface so
 * that application code compiles unchanged; the implementation (libascendcl.so)
 * runs on the host CPU. Every function is thread-safe unless its comment says
 * otherwise. A function that returns aclError records a message describing the
 * failure, readable with aclGetRecentErrMsg() from the same thread.
 *
 * Conventions used in the comments below:
 *   "Owned by the caller"  the library never frees it.
 *   "Owned by the library" release it only with the named destroy function.
 */
#ifndef OPENCANN_ACL_ACL_BASE_H_
#define OPENCANN_ACL_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; only functions marked with this
 * macro are exported from libascendcl.so. */
#if defined(_MSC_VER)
#define ACL_FUNC_VISIBILITY __declspec(dllexport)
#else
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

#if defined(__GNUC__)
#define ACL_DEPRECATED __attribute__((deprecated))
#define ACL_DEPRECATED_MESSAGE(message) __attribute__((deprecated(message)))
#else
#define ACL_DEPRECATED
#define ACL_DEPRECATED_MESSAGE(message)
#endif

/* Opaque handles. Streams, events and contexts are created and destroyed with
 * the aclrt* functions in acl_rt.h; NULL as a stream means the default stream
 * of the calling thread's current context. */
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef int aclError;
typedef uint16_t aclFloat16; /* IEEE 754 binary16 bit pattern */
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclTensorDesc aclTensorDesc;

/* ---- Error codes --------------------------------------------------------------
 * 1xxxxx: the caller's request is wrong (argument, order of calls, file).
 * 2xxxxx: a resource or feature is unavailable.
 * 5xxxxx: an internal failure.
 * 107xxx / 207xxx / 507xxx: the same three classes raised by the runtime layer. */
static const int ACL_ERROR_NONE = 0;
static const int ACL_SUCCESS = 0;

static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_WRITE_FILE = 100004;
static const int ACL_ERROR_INVALID_FILE_SIZE = 100005;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_FILE_MISSING_ATTR = 100007;
static const int ACL_ERROR_FILE_ATTR_INVALID = 100008;
static const int ACL_ERROR_INVALID_DUMP_CONFIG = 100009;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
static const int ACL_ERROR_INVALID_MODEL_ID = 100011;
static const int ACL_ERROR_DESERIALIZE_MODEL = 100012;
static const int ACL_ERROR_PARSE_MODEL = 100013;
static const int ACL_ERROR_READ_MODEL_FAILURE = 100014;
static const int ACL_ERROR_MODEL_SIZE_INVALID = 100015;
static const int ACL_ERROR_MODEL_MISSING_ATTR = 100016;
static const int ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017;
static const int ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018;
static const int ACL_ERROR_MODEL_NOT_DYNAMIC = 100019;
static const int ACL_ERROR_OP_TYPE_NOT_MATCH = 100020;
static const int ACL_ERROR_OP_INPUT_NOT_MATCH = 100021;
static const int ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022;
static const int ACL_ERROR_OP_ATTR_NOT_MATCH = 100023;
static const int ACL_ERROR_OP_NOT_FOUND = 100024;
static const int ACL_ERROR_OP_LOAD_FAILED = 100025;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
static const int ACL_ERROR_FORMAT_NOT_MATCH = 100027;
static const int ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028;
static const int ACL_ERROR_KERNEL_NOT_FOUND = 100029;
static const int ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030;
static const int ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031;
static const int ACL_ERROR_INVALID_QUEUE_ID = 100032;
static const int ACL_ERROR_REPEAT_SUBSCRIBE = 100033;
static const int ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034;
static const int ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035;
static const int ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_NOT_STATIC_AIPP = 100038;
static const int ACL_ERROR_COMPILING_STUB_MODE = 100039;
static const int ACL_ERROR_GROUP_NOT_SET = 100040;
static const int ACL_ERROR_GROUP_NOT_CREATE = 100041;
static const int ACL_ERROR_PROF_ALREADY_RUN = 100042;
static const int ACL_ERROR_PROF_NOT_RUN = 100043;
static const int ACL_ERROR_DUMP_ALREADY_RUN = 100044;
static const int ACL_ERROR_DUMP_NOT_RUN = 100045;

static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007;

static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;

/* Runtime-layer codes. */
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int ACL_ERROR_RT_MODEL_CONTEXT = 107004;
static const int ACL_ERROR_RT_STREAM_MODEL = 107005;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007;
static const int ACL_ERROR_RT_ADDR_UNALIGNED = 107008;
static const int ACL_ERROR_RT_FILE_OPEN = 107009;
static const int ACL_ERROR_RT_FILE_WRITE = 107010;
static const int ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011;
static const int ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012;
static const int ACL_ERROR_RT_GROUP_NOT_SET = 107013;
static const int ACL_ERROR_RT_GROUP_NOT_CREATE = 107014;
static const int ACL_ERROR_RT_STREAM_NO_CB_REG = 107015;
static const int ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
static const int ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018;
static const int ACL_ERROR_RT_WAIT_TIMEOUT = 107019;
static const int ACL_ERROR_RT_TASK_TIMEOUT = 107020;

static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_MEMORY_FREE = 207002;
static const int ACL_ERROR_RT_AICORE_OVER_FLOW = 207003;
static const int ACL_ERROR_RT_NO_DEVICE = 207004;
static const int ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005;
static const int ACL_ERROR_RT_NO_PERMISSION = 207006;
static const int ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007;
static const int ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008;
static const int ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009;
static const int ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010;
static const int ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011;
static const int ACL_ERROR_RT_OVER_LIMIT = 207012;
static const int ACL_ERROR_RT_QUEUE_EMPTY = 207013;
static const int ACL_ERROR_RT_QUEUE_FULL = 207014;
static const int ACL_ERROR_RT_REPEATED_INIT = 207015;
static const int ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016;
static const int ACL_ERROR_RT_OVER_FLOW = 207017;
static const int ACL_ERROR_RT_DEVIDE_OOM = 207018;

static const int ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int ACL_ERROR_RT_TS_ERROR = 507001;
static const int ACL_ERROR_RT_STREAM_TASK_FULL = 507002;
static const int ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003;
static const int ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004;
static const int ACL_ERROR_RT_END_OF_SEQUENCE = 507005;
static const int ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006;
static const int ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007;
static const int ACL_ERROR_RT_SOC_VERSION = 507008;
static const int ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009;
static const int ACL_ERROR_RT_LOST_HEARTBEAT = 507010;
static const int ACL_ERROR_RT_MODEL_EXECUTE = 507011;
static const int ACL_ERROR_RT_REPORT_TIMEOUT = 507012;
static const int ACL_ERROR_RT_SYS_DMA = 507013;
static const int ACL_ERROR_RT_AICORE_TIMEOUT = 507014;
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
static const int ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016;
static const int ACL_ERROR_RT_AICPU_TIMEOUT = 507017;
static const int ACL_ERROR_RT_AICPU_EXCEPTION = 507018;
static const int ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR = 507019;
static const int ACL_ERROR_RT_AICPU_MODEL_RSP_ERR = 507020;
static const int ACL_ERROR_RT_PROFILING_ERROR = 507021;
static const int ACL_ERROR_RT_IPC_ERROR = 507022;
static const int ACL_ERROR_RT_MODEL_ABORT_NORMAL = 507023;
static const int ACL_ERROR_RT_KERNEL_UNREGISTERING = 507024;
static const int ACL_ERROR_RT_RINGBUFFER_NOT_INIT = 507025;
static const int ACL_ERROR_RT_RINGBUFFER_NO_DATA = 507026;
static const int ACL_ERROR_RT_KERNEL_LOOKUP = 507027;
static const int ACL_ERROR_RT_KERNEL_DUPLICATE = 507028;
static const int ACL_ERROR_RT_DEBUG_REGISTER_FAIL = 507029;
static const int ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL = 507030;
static const int ACL_ERROR_RT_LABEL_CONTEXT = 507031;
static const int ACL_ERROR_RT_PROGRAM_USE_OUT = 507032;
static const int ACL_ERROR_RT_DEV_SETUP_ERROR = 507033;
static const int ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046;
static const int ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047;
static const int ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899;
static const int ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900;
static const int ACL_ERROR_RT_SOCKET_CLOSE = 507901;

#define ACL_TENSOR_SHAPE_RANGE_NUM 2
#define ACL_TENSOR_VALUE_RANGE_NUM 2
#define ACL_UNKNOWN_RANK 0xFFFFFFFFFFFFFFFE

/* Element types. The numbering is CANN's, not ONNX's. */
typedef enum {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_STRING = 13,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27,
  ACL_INT4 = 29,
  ACL_UINT1 = 30,
  ACL_COMPLEX32 = 33,
  ACL_HIFLOAT8 = 34,
  ACL_FLOAT8_E5M2 = 35,
  ACL_FLOAT8_E4M3FN = 36,
  ACL_FLOAT8_E8M0 = 37,
  ACL_FLOAT6_E3M2 = 38,
  ACL_FLOAT6_E2M3 = 39,
  ACL_FLOAT4_E2M1 = 40,
  ACL_FLOAT4_E1M2 = 41
} aclDataType;
/* Models report ONNX element types with these codes; ONNX types CANN has no
 * code for (float8 E4M3FNUZ / E5M2FNUZ, uint4, int2, uint2) read
 * ACL_DT_UNDEFINED, their sizes are still right. ACL_INT4 and ACL_FLOAT4_E2M1
 * are packed two elements per byte, element 0 in the low nibble. ACL_HIFLOAT8,
 * ACL_FLOAT6_* and ACL_FLOAT4_E1M2 exist for source compatibility: no model or
 * operator here uses them. */

/* Memory layouts. Only the plain ones (ND, NCHW, NHWC, NCDHW, NDHWC) describe
 * data this CPU implementation produces; the others exist for source
 * compatibility. */
typedef enum {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_NC1HWC0_C04 = 12,
  ACL_FORMAT_HWCN = 16,
  ACL_FORMAT_NDHWC = 27,
  ACL_FORMAT_FRACTAL_NZ = 29,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NDC1HWC0 = 32,
  ACL_FRACTAL_Z_3D = 33,
  ACL_FORMAT_NC = 35,
  ACL_FORMAT_NCL = 47
} aclFormat;

typedef enum {
  ACL_DEBUG = 0,
  ACL_INFO = 1,
  ACL_WARNING = 2,
  ACL_ERROR = 3
} aclLogLevel;

typedef enum {
  ACL_MEMTYPE_DEVICE = 0,
  ACL_MEMTYPE_HOST = 1,
  ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2
} aclMemType;

/* ---- Error messages -------------------------------------------------------- */

/* The message recorded by the most recent failing call on this thread (it names
 * the function, the argument at fault and what was expected), or "" when none
 * failed yet. The string is owned by the library and stays valid until the next
 * AscendCL call on the same thread. Reading it does not clear it. Never fails;
 * needs no aclInit. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

/* ---- float16 helpers (pure functions, no aclInit needed) ------------------- */

/* Widens a binary16 value; NaN and infinities are preserved. */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
/* Narrows with round-to-nearest-even; out-of-range values become infinities. */
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

/* ---- aclDataBuffer: a (pointer, size) pair ----------------------------------
 * The buffer object is owned by the library (free it with aclDestroyDataBuffer);
 * the memory it points to stays owned by the caller and is never freed by these
 * functions. None of them needs aclInit. */

/* Returns a new buffer describing `size` bytes at `data` (data may be NULL only
 * when size is 0, e.g. for an output filled later), or NULL when out of memory
 * or when data is NULL with a non-zero size (message set). */
ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
/* Frees the buffer object (not the memory). Returns ACL_ERROR_INVALID_PARAM for
 * NULL or a pointer that is not a live aclDataBuffer. */
ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
/* Points an existing buffer at new memory; the old memory is not freed.
 * ACL_ERROR_INVALID_PARAM when dataBuffer is NULL/unknown or data is NULL with
 * size > 0. */
ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);
/* The memory address, or NULL for a NULL/unknown buffer. */
ACL_FUNC_VISIBILITY void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);
/* The size truncated to 32 bits (prefer the V2 form); 0 for a NULL buffer. */
ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer);
/* The size in bytes; 0 for a NULL/unknown buffer. */
ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);

/* Bytes per element of dataType (1 for the 8-bit floats); 0 for ACL_STRING,
 * ACL_DT_UNDEFINED, unknown values and the sub-byte types (ACL_INT4,
 * ACL_UINT1, ACL_FLOAT4_*, ACL_FLOAT6_*), whose sizes are whole tensors'
 * packed bytes: aclGetTensorDescSize, aclmdlGetInputSizeByIndex. */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/* ---- aclTensorDesc: element type, shape and layout of a tensor --------------
 * Owned by the library; free with aclDestroyTensorDesc. No aclInit needed. */

/* Returns a new description, or NULL (message set) when numDims < 0, when dims
 * is NULL with numDims > 0, or when a dimension is below -2. A dim of -1 means
 * unknown; numDims 0 describes a scalar. The dims array is copied. */
ACL_FUNC_VISIBILITY aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims,
                                                       const int64_t *dims, aclFormat format);
/* Frees a description; NULL is ignored. */
ACL_FUNC_VISIBILITY void aclDestroyTensorDesc(const aclTensorDesc *desc);
/* ACL_DT_UNDEFINED for NULL. */
ACL_FUNC_VISIBILITY aclDataType aclGetTensorDescType(const aclTensorDesc *desc);
/* ACL_FORMAT_UNDEFINED for NULL. */
ACL_FUNC_VISIBILITY aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc);
/* Bytes of the whole tensor (element count times element size; packed bytes,
 * rounded up, for the 4-bit and 1-bit types); 0 for NULL, when a dimension is
 * unknown or for a type without a size (ACL_STRING, ACL_FLOAT6_*). */
ACL_FUNC_VISIBILITY size_t aclGetTensorDescSize(const aclTensorDesc *desc);
/* Product of the dims (1 for a scalar); 0 for NULL or an unknown dimension. */
ACL_FUNC_VISIBILITY size_t aclGetTensorDescElementCount(const aclTensorDesc *desc);
/* The rank; 0 for NULL. */
ACL_FUNC_VISIBILITY size_t aclGetTensorDescNumDims(const aclTensorDesc *desc);
/* Dimension `index`, or -1 when desc is NULL or index is out of range. */
ACL_FUNC_VISIBILITY int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index);
/* Writes dimension `index` to *dimSize. ACL_ERROR_INVALID_PARAM when an
 * argument is NULL or index >= rank. */
ACL_FUNC_VISIBILITY aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize);
/* Sets the tensor's name (copied); NULL desc is ignored, NULL name clears it. */
ACL_FUNC_VISIBILITY void aclSetTensorDescName(aclTensorDesc *desc, const char *name);
/* The name ("" when unset or desc is NULL); valid until the desc is changed or
 * destroyed. */
ACL_FUNC_VISIBILITY const char *aclGetTensorDescName(aclTensorDesc *desc);
/* Marks the tensor as a constant whose value is the `length` bytes at
 * `dataBuffer` (host memory, copied now): single-operator execution then
 * compiles the value into the operator (needed where an input decides output
 * shapes, such as Reshape's shape or Slice's starts). ACL_ERROR_INVALID_PARAM
 * for a NULL or unknown desc, a NULL buffer, or a length that is not the
 * desc's byte size. */
ACL_FUNC_VISIBILITY aclError aclSetTensorConst(aclTensorDesc *desc, void *dataBuffer, size_t length);
/* Where the tensor's data lives. Accepted for source compatibility: on the CPU
 * device, host and device memory are the same. */
ACL_FUNC_VISIBILITY aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_ACL_BASE_H_ */
