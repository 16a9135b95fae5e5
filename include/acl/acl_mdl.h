/*
 * OpenCANN: model part of the AscendCL-compatible C API (load .om files made by
 * `atc`, describe their inputs/outputs, execute them).
 *
 * A loaded model is read-only and may be executed concurrently from several
 * threads or streams; each execution uses its own activation memory. All
 * functions that return aclError need a prior aclInit (ACL_ERROR_UNINITIALIZE
 * otherwise) and record a message for aclGetRecentErrMsg when they fail.
 * Dataset and description objects are plain host objects and need no aclInit.
 */
#ifndef OPENCANN_ACL_ACL_MDL_H_
#define OPENCANN_ACL_ACL_MDL_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAX_DIM_CNT 128
#define ACL_MAX_TENSOR_NAME_LEN 128
#define ACL_MAX_BATCH_NUM 128
#define ACL_MAX_HW_NUM 128
#define ACL_MAX_SHAPE_COUNT 128
/* Name of the extra model input of a gear model (atc --dynamic_batch_size,
 * --dynamic_image_size or --dynamic_dims): find it with
 * aclmdlGetInputIndexByName, give it a buffer of aclmdlGetInputSizeByIndex
 * bytes in the input dataset, and select the gear with aclmdlSetDynamicBatchSize,
 * aclmdlSetDynamicHWSize or aclmdlSetInputDynamicDims before executing. */
#define ACL_DYNAMIC_TENSOR_NAME "ascend_mbatch_shape_data"

typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;

/* Shape of one model input or output. `name` is NUL-terminated and truncated to
 * ACL_MAX_TENSOR_NAME_LEN - 1 characters; a scalar has dimCount 0. */
typedef struct aclmdlIODims {
  char name[ACL_MAX_TENSOR_NAME_LEN];
  size_t dimCount;
  int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

/* The batch gears of a --dynamic_batch_size model. */
typedef struct aclmdlBatch {
  size_t batchCount;
  uint64_t batch[ACL_MAX_BATCH_NUM];
} aclmdlBatch;

/* The (height, width) gears of a --dynamic_image_size model. */
typedef struct aclmdlHW {
  size_t hwCount;
  uint64_t hw[ACL_MAX_HW_NUM][2];
} aclmdlHW;

/* ---- Loading --------------------------------------------------------------------- */

/* Loads and verifies a .om file and writes a new model id. The model owns its
 * working memory. ACL_ERROR_INVALID_PARAM for NULL arguments;
 * ACL_ERROR_READ_MODEL_FAILURE when the file cannot be read; ACL_ERROR_PARSE_MODEL
 * for a corrupt or incompatible file; ACL_ERROR_FEATURE_UNSUPPORTED when the
 * model uses an op this build cannot run. The message says which check failed. */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
/* As aclmdlLoadFromFile from `modelSize` bytes at `model`; the bytes are copied,
 * so the caller may free them after the call. */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
/* Loads a model whose activations live in caller memory: `workPtr` must be
 * device memory (aclrtMalloc) of at least the work size reported by
 * aclmdlQuerySize and stay allocated until aclmdlUnload; executions of such a
 * model are serialised because they share that memory. workPtr NULL lets the
 * library allocate it. The weights stay in the library's read-only copy of the
 * file (shared by all executions), so `weightPtr` is accepted but not used; if
 * given, weightSize must be at least the reported weight size.
 * ACL_ERROR_INVALID_PARAM for NULL arguments, a too-small size, or workPtr not
 * 64-byte aligned or not device memory; ACL_ERROR_FEATURE_UNSUPPORTED for a
 * model with dynamic shapes (its work memory depends on the shapes it runs at;
 * aclmdlQuerySize reports 0 for it); otherwise as aclmdlLoadFromFile. */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId, void *workPtr,
                                                       size_t workSize, void *weightPtr, size_t weightSize);
/* As aclmdlLoadFromFileWithMem from memory (copied). */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMemWithMem(const void *model, size_t modelSize, uint32_t *modelId,
                                                      void *workPtr, size_t workSize, void *weightPtr,
                                                      size_t weightSize);
/* Writes the activation (work) and weight bytes a model needs, reading the file
 * header and plan. Errors as aclmdlLoadFromFile. */
ACL_FUNC_VISIBILITY aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);
/* As aclmdlQuerySize for a model held in memory. */
ACL_FUNC_VISIBILITY aclError aclmdlQuerySizeFromMem(const void *model, size_t modelSize, size_t *workSize,
                                                    size_t *weightSize);
/* Waits for the model's queued executions, then releases it; the id becomes
 * invalid. ACL_ERROR_INVALID_MODEL_ID for an unknown or unloaded id. */
ACL_FUNC_VISIBILITY aclError aclmdlUnload(uint32_t modelId);

/* ---- Description --------------------------------------------------------------------
 * An aclmdlDesc is a snapshot of a model's inputs and outputs, owned by the
 * library (aclmdlCreateDesc / aclmdlDestroyDesc) and independent of the model
 * once filled: it stays readable after aclmdlUnload. Strings returned by the
 * getters live as long as the desc. Getters returning size_t answer 0 and those
 * returning enums answer the UNDEFINED value for a NULL desc or a bad index
 * (with a message set). */

ACL_FUNC_VISIBILITY aclmdlDesc *aclmdlCreateDesc(void);
/* ACL_ERROR_INVALID_PARAM for NULL or an unknown/destroyed desc. */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
/* Fills the desc from a loaded model. ACL_ERROR_INVALID_PARAM for a NULL or
 * unknown desc; ACL_ERROR_INVALID_MODEL_ID for an unknown id. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
/* Bytes of input/output `index` (the size its data buffer must have; for the
 * 4-bit types the packed size, two elements per byte, rounded up). */
ACL_FUNC_VISIBILITY size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
/* Writes name and shape of input/output `index`. ACL_ERROR_INVALID_PARAM for
 * NULL arguments or index out of range. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
/* Dynamic models: a dim set at run time reads -1, and -2 alone stands for an
 * unknown rank. Sizes (aclmdlGetInputSizeByIndex / aclmdlGetOutputSizeByIndex)
 * of a gear model are those of its largest gear; those of a model with free
 * unknown dims (atc --input_shape with -1 and no gears, or symbolic dims in the
 * ONNX model) are 0 where they depend on the run-time shape. Where an output's
 * shape depends on input data (NonZero, Unique, ...) the model runs node by
 * node: its output buffers are checked against the actual sizes when the run
 * ends (an error reported by the execution or the stream's synchronization),
 * and the shapes are then in the output dataset's descs and
 * aclmdlGetCurOutputDims. Where an output's size is not known beforehand,
 * aclmdlExecute can allocate it: see there. */
/* Same as aclmdlGetInputDims: the shape seen by the user and the shape the
 * model runs on are the same here. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
/* Shape of output `index` for the shapes the model last ran at (or, for a gear
 * model, the gear last selected with aclmdlSetDynamicBatchSize /
 * aclmdlSetDynamicHWSize / aclmdlSetInputDynamicDims), found through the model
 * the desc was filled from; the desc's own dims (as aclmdlGetOutputDims) for a
 * static model, before any run, or once the model is unloaded. */
ACL_FUNC_VISIBILITY aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);

/* ---- Dynamic shapes -----------------------------------------------------------------------
 * Gear models (see ACL_DYNAMIC_TENSOR_NAME) and models with unknown dims.
 * `index` of the getters is reserved (CANN passes -1) and ignored. */

/* The batch gears; batchCount 0 for a model without --dynamic_batch_size. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch);
/* The image-size gears; hwCount 0 for a model without --dynamic_image_size. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw);
/* Number of gears of a --dynamic_dims model (0 for other models). */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index,
                                                            size_t *gearCount);
/* The gears of a --dynamic_dims model: dims[k] (for k < gearCount, which must be
 * the count aclmdlGetInputDynamicGearCount gives) holds the shapes of all model
 * inputs (the dynamic tensor excepted) of gear k one after another; dimCount is
 * the sum of their ranks. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index,
                                                       aclmdlIODims *dims, size_t gearCount);
/* Select the gear of the next executions that use `dataset`: `index` must be the
 * index of ACL_DYNAMIC_TENSOR_NAME, and the dataset's buffer at that index is
 * written (it must be at least aclmdlGetInputSizeByIndex bytes of device
 * memory). The value must be a gear of the model: ACL_ERROR_INVALID_PARAM with a
 * message listing the gears otherwise, or for a model without that kind of
 * gear. For aclmdlSetInputDynamicDims, dims holds the concatenated input shapes
 * of one gear as aclmdlGetInputDynamicDims reports them. */
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                       uint64_t batchSize);
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                    uint64_t height, uint64_t width);
ACL_FUNC_VISIBILITY aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                       const aclmdlIODims *dims);
/* Tensor name of input/output `index`, or "" (never NULL) on error. */
ACL_FUNC_VISIBILITY const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
/* Layout recorded by atc for the input (NCHW/NHWC/ND), ND for outputs. */
ACL_FUNC_VISIBILITY aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);
/* Finds an input/output by tensor name. ACL_ERROR_INVALID_PARAM for NULL
 * arguments or a name the model does not have. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name,
                                                       size_t *index);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name,
                                                        size_t *index);

/* ---- Datasets ---------------------------------------------------------------------------
 * An ordered list of aclDataBuffer pointers, one per model input or output. The
 * dataset is owned by the library (aclmdlCreateDataset / aclmdlDestroyDataset);
 * the buffers it lists stay owned by the caller and are not destroyed with it. */

ACL_FUNC_VISIBILITY aclmdlDataset *aclmdlCreateDataset(void);
/* ACL_ERROR_INVALID_PARAM for NULL or an unknown/destroyed dataset. */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDataset(const aclmdlDataset *dataset);
/* Appends a buffer. ACL_ERROR_INVALID_PARAM for NULL or unknown arguments. */
ACL_FUNC_VISIBILITY aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
/* Number of buffers; 0 for NULL. */
ACL_FUNC_VISIBILITY size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
/* Buffer `index`, or NULL for a NULL dataset or index out of range. */
ACL_FUNC_VISIBILITY aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);
/* Input datasets of a model with unknown dims: the shape input `index` runs at
 * (dtype and rank must match the model, dims its fixed dims). The desc is
 * copied; the caller keeps ownership of `tensorDesc`. ACL_ERROR_INVALID_PARAM
 * for NULL or unknown arguments or an index past the dataset's buffers. */
ACL_FUNC_VISIBILITY aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc,
                                                        size_t index);
/* The desc set for buffer `index`: for an output dataset after an execution of
 * a dynamic model, the shape that output was written with. Owned by the dataset
 * (valid until it is destroyed or the desc is set again; do not destroy it);
 * NULL when none is set or for bad arguments. */
ACL_FUNC_VISIBILITY aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index);

/* ---- Execution -------------------------------------------------------------------------- */

/* Runs the model and returns when the outputs are written: the same as
 * aclmdlExecuteAsync on the current context's default stream followed by a
 * synchronization of that stream, so it also waits for work queued earlier on
 * that stream. Errors as aclmdlExecuteAsync, plus those of the run itself. For
 * parallel executions from several threads give each thread its own stream.
 * An output buffer given as (NULL, 0) (aclCreateDataBuffer(NULL, 0)) is
 * allocated by the execution: device memory of exactly the bytes the output
 * came out with (for a dynamic model, at this run's shapes; where the shape
 * depends on data, once the run has made it), set into the buffer
 * (aclGetDataBufferAddr / aclGetDataBufferSizeV2; the shape is in the output
 * dataset's desc, aclmdlGetDatasetTensorDesc, for dynamic models). The memory
 * is the caller's: free it with aclrtFree, and reset the buffer with
 * aclUpdateDataBuffer(buffer, NULL, 0) to have the next execution allocate
 * again (or keep it for the next run, if its size is still enough). An output
 * of 0 bytes leaves the buffer as it is. aclmdlExecuteAsync does not
 * allocate: it takes such a buffer as one of 0 bytes. */
ACL_FUNC_VISIBILITY aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output);
/* Queues one execution on `stream` (NULL: default stream) and returns. The
 * datasets are checked now: one buffer per input/output; input buffers of
 * exactly, output buffers of at least, the size the model states (of a dynamic
 * model: input and output buffers of at least the sizes of the shapes it runs at,
 * taken from the gear selected in the dynamic tensor or from the input
 * dataset's tensor descs); all in
 * device memory (aclrtMalloc) or registered host memory (aclrtMallocHost).
 * Failures are ACL_ERROR_INVALID_PARAM with a message naming the index and both
 * sizes; ACL_ERROR_INVALID_MODEL_ID for an unknown id; ACL_ERROR_RT_CONTEXT_NULL
 * for a NULL stream on a thread without a current context. The datasets and
 * buffer objects may be changed or destroyed once the call returns.
 * The buffer addresses are captured at call time; their contents must stay
 * valid until the stream reaches the task. Failures during the run are reported
 * by the stream's next synchronization. */
ACL_FUNC_VISIBILITY aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input,
                                                aclmdlDataset *output, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_ACL_MDL_H_ */
