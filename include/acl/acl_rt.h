/*
 * OpenCANN: runtime part of the AscendCL-compatible C API (devices, contexts,
 * streams, events, memory).
 *
 * The device is the host CPU: there is exactly one device, id 0. "Device
 * memory" is host memory allocated by aclrtMalloc and tracked by the library so
 * that copies are checked against the direction the caller states. A stream is
 * a real asynchronous, in-order queue served by its own worker thread; idle
 * workers sleep. Every function here needs a prior aclInit (otherwise
 * ACL_ERROR_UNINITIALIZE) and records a message for aclGetRecentErrMsg when it
 * fails.
 */
#ifndef OPENCANN_ACL_ACL_RT_H_
#define OPENCANN_ACL_ACL_RT_H_

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event creation flags (aclrtCreateEventWithFlag). */
#define ACL_EVENT_SYNC 0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002U
#define ACL_EVENT_TIME_LINE 0x00000008U
#define ACL_EVENT_DEFAULT 0x0000000EU

typedef enum aclrtRunMode {
  ACL_DEVICE,
  ACL_HOST
} aclrtRunMode;

typedef enum aclrtEventStatus {
  ACL_EVENT_STATUS_COMPLETE = 0,
  ACL_EVENT_STATUS_NOT_READY = 1,
  ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;

typedef enum aclrtEventRecordedStatus {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

typedef enum aclrtStreamStatus {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
  ACL_MEMCPY_DEFAULT /* direction taken from where the pointers live */
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
  ACL_DDR_MEM,
  ACL_HBM_MEM,
  ACL_DDR_MEM_HUGE,
  ACL_DDR_MEM_NORMAL,
  ACL_HBM_MEM_HUGE,
  ACL_HBM_MEM_NORMAL,
  ACL_DDR_MEM_P2P_HUGE,
  ACL_DDR_MEM_P2P_NORMAL,
  ACL_HBM_MEM_P2P_HUGE,
  ACL_HBM_MEM_P2P_NORMAL
} aclrtMemAttr;

typedef enum aclrtCallbackBlockType {
  ACL_CALLBACK_NO_BLOCK,
  ACL_CALLBACK_BLOCK
} aclrtCallbackBlockType;

/* A host function queued on a stream with aclrtLaunchCallback. */
typedef void (*aclrtCallback)(void *userData);

/* ---- Devices ------------------------------------------------------------------ */

/* Opens device `deviceId` for this process (reference counted) and makes its
 * default context current on the calling thread; the default context and its
 * default stream are created on first use. ACL_ERROR_INVALID_DEVICE for any id
 * other than 0. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
/* Drops one reference taken by aclrtSetDevice. When the last one goes, the
 * default context is destroyed together with every stream created in it
 * (pending work is finished first). Contexts made by aclrtCreateContext and
 * memory from aclrtMalloc survive until destroyed/freed or until aclFinalize.
 * ACL_ERROR_INVALID_DEVICE for a bad id or a device that was not set. */
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
/* Writes the device of the calling thread's current context. ACL_ERROR_INVALID_PARAM
 * for NULL; ACL_ERROR_RT_CONTEXT_NULL when the thread has no current context. */
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
/* Writes the number of devices (always 1). ACL_ERROR_INVALID_PARAM for NULL. */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
/* The name of the device's chip: "OpenCANN-CPU" followed by the instruction
 * set in use (for example "OpenCANN-CPU-avx512"). Static storage; NULL before
 * aclInit. */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);
/* Writes ACL_HOST: the application and the "device" share one machine.
 * ACL_ERROR_INVALID_PARAM for NULL. */
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);
/* Waits until every stream of the device has finished its queued work. Returns
 * the first error a stream reported since it was last synchronized (its code
 * and message), else ACL_SUCCESS. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

/* ---- Contexts ------------------------------------------------------------------ */

/* Creates a context on `deviceId` and makes it current for the calling thread.
 * The context is owned by the library; destroy it with aclrtDestroyContext.
 * ACL_ERROR_INVALID_PARAM for NULL; ACL_ERROR_INVALID_DEVICE for a bad id. */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
/* Destroys a context made by aclrtCreateContext and every stream created in it
 * (pending work is finished first); threads that had it current are left with
 * none. ACL_ERROR_INVALID_PARAM for NULL, an unknown/destroyed handle, or the
 * default context of a device (release that with aclrtResetDevice). */
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
/* Makes `context` current for the calling thread. ACL_ERROR_INVALID_PARAM for
 * NULL or an unknown/destroyed handle. */
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
/* Writes the calling thread's current context. ACL_ERROR_INVALID_PARAM for
 * NULL; ACL_ERROR_RT_CONTEXT_NULL when there is none. */
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

/* ---- Streams ------------------------------------------------------------------- */

/* Creates an asynchronous in-order queue in the current context. Owned by the
 * library: destroy with aclrtDestroyStream (or by destroying its context).
 * ACL_ERROR_INVALID_PARAM for NULL; ACL_ERROR_RT_CONTEXT_NULL without a current
 * context (call aclrtSetDevice first). */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
/* Finishes the stream's queued work, then destroys it. ACL_ERROR_INVALID_PARAM
 * for NULL or an unknown/destroyed stream. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/* Blocks until everything queued so far has run. NULL means the default stream
 * of the current context. Returns the first error of a task since the last
 * synchronization (that task's code; the message names the task), else
 * ACL_SUCCESS. ACL_ERROR_INVALID_PARAM for an unknown/destroyed stream. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
/* As aclrtSynchronizeStream, but gives up after `timeout` milliseconds with
 * ACL_ERROR_RT_STREAM_SYNC_TIMEOUT (the work keeps running). timeout -1 waits
 * forever; other negative values are ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
/* Writes ACL_STREAM_STATUS_COMPLETE when the queue is drained, else
 * ACL_STREAM_STATUS_NOT_READY; never blocks. ACL_ERROR_INVALID_PARAM for a NULL
 * status or an unknown stream. */
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
/* Queues a wait: work queued on `stream` after this call starts only once the
 * most recent aclrtRecordEvent(event, ...) issued before this call has run. An
 * event never recorded is already satisfied. ACL_ERROR_INVALID_PARAM for an
 * unknown stream or a NULL/unknown event. */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);

/* As aclrtCreateStream; priority and flag are accepted and ignored (all CPU
 * streams are equal). */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);

/* ---- Host callbacks -------------------------------------------------------------
 * A callback queued on a stream runs, when the stream reaches it, on the thread
 * subscribed to that stream, inside that thread's aclrtProcessReport call. */

/* Makes thread `threadId` (its pthread_self() value) the one that runs host
 * callbacks of `stream` (not NULL). A stream has at most one such thread; a
 * thread may serve several streams. ACL_ERROR_INVALID_PARAM for a NULL or
 * unknown stream; ACL_ERROR_REPEAT_SUBSCRIBE when the stream already has one. */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
/* Ends the subscription. ACL_ERROR_STREAM_NOT_SUBSCRIBE when `threadId` is not
 * the stream's subscribed thread; ACL_ERROR_INVALID_PARAM for a bad stream. */
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);
/* Queues `fn(userData)` on `stream` (NULL: default stream). With
 * ACL_CALLBACK_BLOCK the stream continues only after the callback returned;
 * with ACL_CALLBACK_NO_BLOCK it continues at once. ACL_ERROR_INVALID_PARAM for
 * a NULL fn, a bad stream or block type; ACL_ERROR_STREAM_NOT_SUBSCRIBE when no
 * thread is subscribed to the stream. */
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                                                 aclrtStream stream);
/* Runs one pending callback addressed to the calling thread, waiting up to
 * `timeout` ms for one (-1: forever). ACL_ERROR_WAIT_CALLBACK_TIMEOUT when none
 * arrived in time; ACL_ERROR_THREAD_NOT_SUBSCRIBE when the calling thread is
 * subscribed to no stream; ACL_ERROR_INVALID_PARAM for timeout < -1. */
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout);

/* ---- Events -------------------------------------------------------------------- */

/* Creates an event (timing enabled). Owned by the library; destroy with
 * aclrtDestroyEvent. ACL_ERROR_INVALID_PARAM for NULL. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
/* Creates an event with ACL_EVENT_* flags; timing (aclrtEventElapsedTime) only
 * works when ACL_EVENT_TIME_LINE is set. ACL_ERROR_INVALID_PARAM for NULL or
 * unknown flag bits. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
/* Destroys an event. Waits already queued on streams still complete normally.
 * ACL_ERROR_INVALID_PARAM for NULL or an unknown/destroyed event. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
/* Queues a marker on `stream` (NULL: default stream); when the stream reaches
 * it the event completes and takes a timestamp. ACL_ERROR_INVALID_PARAM for an
 * unknown event or stream. */
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
/* Queues a reset of the event on `stream`: once it runs the event reads as not
 * recorded. Same errors as aclrtRecordEvent. */
ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
/* Blocks until the most recent record of the event has run (returns at once for
 * an event never recorded). ACL_ERROR_INVALID_PARAM for an unknown event. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
/* Writes ACL_EVENT_STATUS_COMPLETE when no record of the event is pending, else
 * ACL_EVENT_STATUS_NOT_READY. ACL_ERROR_INVALID_PARAM for NULL arguments or an
 * unknown event. */
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
/* Writes ACL_EVENT_RECORDED_STATUS_COMPLETE when the event has been recorded and
 * that record has run (and no reset ran since), else ..._NOT_READY. Errors as
 * aclrtQueryEvent. */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
/* Writes the milliseconds between the two events' timestamps. Both must have
 * completed a record: ACL_ERROR_RT_EVENT_NOT_COMPLETE otherwise;
 * ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID when an event lacks ACL_EVENT_TIME_LINE;
 * ACL_ERROR_INVALID_PARAM for NULL or unknown events. */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

/* ---- Memory -------------------------------------------------------------------- */

/* Allocates `size` bytes of device memory, 64-byte aligned, uninitialised, and
 * writes the address. Owned by the caller: free with aclrtFree. The policy is
 * accepted and ignored (no huge pages on this device). ACL_ERROR_INVALID_PARAM
 * for NULL or size 0; ACL_ERROR_BAD_ALLOC when the allocation fails;
 * ACL_ERROR_RT_CONTEXT_NULL before aclrtSetDevice/aclrtCreateContext. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
/* Frees memory from aclrtMalloc. ACL_ERROR_INVALID_PARAM for NULL or for an
 * address that is not the start of a live aclrtMalloc block. */
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
/* Allocates page-registered host memory (64-byte aligned); the caller frees it
 * with aclrtFreeHost. Such memory may also be handed to model execution.
 * Errors as aclrtMalloc. */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
/* Frees memory from aclrtMallocHost. ACL_ERROR_INVALID_PARAM for NULL or an
 * address that is not a live aclrtMallocHost block. */
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
/* Copies `count` bytes synchronously. The kind is checked: a "device" side must
 * lie entirely inside one aclrtMalloc block and a "host" side must not be device
 * memory (ACL_MEMCPY_DEFAULT infers the direction). ACL_ERROR_INVALID_PARAM for
 * NULL pointers with count > 0, count > destMax, a wrong kind or an unknown
 * kind. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);
/* As aclrtMemcpy, checked at once but performed when `stream` (NULL: default
 * stream) reaches it; both buffers must stay valid until then. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                              aclrtMemcpyKind kind, aclrtStream stream);
/* Fills `count` bytes of device memory with the low byte of `value`.
 * ACL_ERROR_INVALID_PARAM for NULL, count > maxCount, or a range that is not
 * inside one aclrtMalloc/aclrtMallocHost block. */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
/* Writes free and total bytes of the device: total is the machine's memory
 * (MemTotal of /proc/meminfo), free is the smaller of MemAvailable and total
 * minus the bytes currently allocated through aclrtMalloc/aclrtMallocHost. Every
 * attr reports the same memory. ACL_ERROR_INVALID_PARAM for NULL pointers. */
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/* ---- Kernel binaries (Ascend C) --------------------------------------------------- */
/* On the CPU a kernel binary is a shared library built by ascendc++ -shared -fPIC
 * from Ascend C kernel sources; each kernel it defines can be launched by name
 * with its arguments packed in memory, one 8-byte slot per argument (pointers
 * and scalars of up to 8 bytes), in the kernel's parameter order. */
typedef void *aclrtBinHandle;
typedef void *aclrtFuncHandle;
typedef void *aclrtBinary;

typedef enum aclrtBinaryLoadOptionType {
  ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1,
  ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2,
  ACL_RT_BINARY_LOAD_OPT_MAGIC = 2,
  ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3,
} aclrtBinaryLoadOptionType;
typedef union aclrtBinaryLoadOptionValue {
  uint32_t isLazyLoad;
  uint32_t magic;
  int32_t cpuKernelMode;
  uint32_t rsv[4];
} aclrtBinaryLoadOptionValue;
typedef struct aclrtBinaryLoadOption {
  aclrtBinaryLoadOptionType type;
  aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;
typedef struct aclrtBinaryLoadOptions {
  aclrtBinaryLoadOption *options;
  size_t numOpt;
} aclrtBinaryLoadOptions;

/* Loads the kernel library at binPath (options are accepted and ignored). A
 * file that is not such a library: ACL_ERROR_INVALID_FILE naming it. */
ACL_FUNC_VISIBILITY aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
                                                     aclrtBinHandle *binHandle);
/* A binary from bytes in memory (the library's file contents); owned by the
 * caller until aclrtDestroyBinary. NULL for NULL data or length 0. */
ACL_FUNC_VISIBILITY aclrtBinary aclrtCreateBinary(const void *data, size_t dataLen);
ACL_FUNC_VISIBILITY aclError aclrtDestroyBinary(aclrtBinary binary);
ACL_FUNC_VISIBILITY aclError aclrtBinaryLoad(const aclrtBinary binary, aclrtBinHandle *binHandle);
/* The kernel named kernelName in the binary; ACL_ERROR_INVALID_PARAM naming the
 * kernels it has when there is none of that name. */
ACL_FUNC_VISIBILITY aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                                    aclrtFuncHandle *funcHandle);
/* Queues the kernel on the stream; the arguments are read from argsData
 * (device or host memory) when the launch runs, in stream order. A size that
 * does not match the kernel's parameters: ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t blockDim, const void *argsData,
                                               size_t argsSize, aclrtStream stream);
/* Unloads the binary; its function handles become invalid. Wait for launches
 * of its kernels (synchronize their streams) first. */
ACL_FUNC_VISIBILITY aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle);

/* ---- OpenCANN extension ---------------------------------------------------------- */

/* Sets the number of CPU threads used inside one model execution (the caller
 * counts as one). The default is $OPENCANN_NUM_THREADS or, when unset, the
 * number of hardware threads. Waits for all queued work before switching.
 * ACL_ERROR_INVALID_PARAM for 0 or more than 256. Not part of CANN. */
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteThreads(uint32_t numThreads);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_ACL_RT_H_ */
