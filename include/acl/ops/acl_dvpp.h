/*
 * OpenCANN: the media-processing (DVPP) part of the AscendCL-compatible C API,
 * V1 interface: JPEG decode/encode, PNG decode and the vision pre-processing
 * core (VPC: resize, crop, crop-and-paste, colour conversion).
 *
 * Names, enum values and signatures are CANN's, so application code written for
 * an Ascend host compiles unchanged (CANN asks applications to define
 * ENABLE_DVPP_INTERFACE before including this header; here the macro is
 * accepted and not required). The work runs on the host CPU, queued in order on
 * the aclrtStream each *Async call is given; aclrtSynchronizeStream returns the
 * first failure of a queued job with its message. docs/dvpp.md lists the
 * format, size and alignment rules followed (one chip profile) and what is not
 * supported yet.
 *
 * Memory: picture data given to the *Async calls must lie inside blocks from
 * acldvppMalloc ("DVPP memory"); other memory is refused, as the hardware's
 * media engine cannot read it. acldvppJpegGetImageInfo* / acldvppPng* header
 * queries read any host memory.
 *
 * Descriptions (channel, picture, ROI, resize and JPEG-encode configs) are
 * owned by the library: release each with its destroy function. A description
 * handed to an *Async call must stay alive until the stream is synchronised.
 * Every function returning aclError records a message for aclGetRecentErrMsg;
 * getters given NULL return 0 (or the documented default) and record one too.
 */
#ifndef OPENCANN_ACL_OPS_ACL_DVPP_H_
#define OPENCANN_ACL_OPS_ACL_DVPP_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct acldvppPicDesc acldvppPicDesc;
typedef struct acldvppBatchPicDesc acldvppBatchPicDesc;
typedef struct acldvppRoiConfig acldvppRoiConfig;
typedef struct acldvppResizeConfig acldvppResizeConfig;
typedef struct acldvppChannelDesc acldvppChannelDesc;
typedef struct acldvppJpegeConfig acldvppJpegeConfig;

/* Pixel layouts. Semi-planar (SP) formats store a Y plane of heightStride rows
 * of widthStride bytes, then one plane of interleaved chroma pairs (U first for
 * YUV_*, V first for YVU_*). Packed formats store heightStride rows of
 * widthStride bytes. Only some are produced or consumed here (docs/dvpp.md);
 * the rest exist for source compatibility. */
typedef enum acldvppPixelFormat {
  PIXEL_FORMAT_YUV_400 = 0,             /* Y only */
  PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1,  /* NV12 */
  PIXEL_FORMAT_YVU_SEMIPLANAR_420 = 2,  /* NV21 */
  PIXEL_FORMAT_YUV_SEMIPLANAR_422 = 3,
  PIXEL_FORMAT_YVU_SEMIPLANAR_422 = 4,
  PIXEL_FORMAT_YUV_SEMIPLANAR_444 = 5,
  PIXEL_FORMAT_YVU_SEMIPLANAR_444 = 6,
  PIXEL_FORMAT_YUYV_PACKED_422 = 7,
  PIXEL_FORMAT_UYVY_PACKED_422 = 8,
  PIXEL_FORMAT_YVYU_PACKED_422 = 9,
  PIXEL_FORMAT_VYUY_PACKED_422 = 10,
  PIXEL_FORMAT_YUV_PACKED_444 = 11,
  PIXEL_FORMAT_RGB_888 = 12,
  PIXEL_FORMAT_BGR_888 = 13,
  PIXEL_FORMAT_ARGB_8888 = 14,
  PIXEL_FORMAT_ABGR_8888 = 15,
  PIXEL_FORMAT_RGBA_8888 = 16,
  PIXEL_FORMAT_BGRA_8888 = 17,
  PIXEL_FORMAT_YUV_SEMI_PLANNER_420_10BIT = 18,
  PIXEL_FORMAT_YVU_SEMI_PLANNER_420_10BIT = 19,
  PIXEL_FORMAT_YVU_PLANAR_420 = 20,
  PIXEL_FORMAT_YVU_PLANAR_422 = 21,
  PIXEL_FORMAT_YVU_PLANAR_444 = 22,
  PIXEL_FORMAT_RGB_444 = 23,
  PIXEL_FORMAT_BGR_444 = 24,
  PIXEL_FORMAT_ARGB_4444 = 25,
  PIXEL_FORMAT_ABGR_4444 = 26,
  PIXEL_FORMAT_RGBA_4444 = 27,
  PIXEL_FORMAT_BGRA_4444 = 28,
  PIXEL_FORMAT_RGB_555 = 29,
  PIXEL_FORMAT_BGR_555 = 30,
  PIXEL_FORMAT_RGB_565 = 31,
  PIXEL_FORMAT_BGR_565 = 32,
  PIXEL_FORMAT_ARGB_1555 = 33,
  PIXEL_FORMAT_ABGR_1555 = 34,
  PIXEL_FORMAT_RGBA_1555 = 35,
  PIXEL_FORMAT_BGRA_1555 = 36,
  PIXEL_FORMAT_ARGB_8565 = 37,
  PIXEL_FORMAT_ABGR_8565 = 38,
  PIXEL_FORMAT_RGBA_8565 = 39,
  PIXEL_FORMAT_BGRA_8565 = 40,
  PIXEL_FORMAT_RGB_BAYER_8BPP = 50,
  PIXEL_FORMAT_RGB_BAYER_10BPP = 51,
  PIXEL_FORMAT_RGB_BAYER_12BPP = 52,
  PIXEL_FORMAT_RGB_BAYER_14BPP = 53,
  PIXEL_FORMAT_RGB_BAYER_16BPP = 54,
  PIXEL_FORMAT_BGR_888_PLANAR = 70,
  PIXEL_FORMAT_HSV_888_PACKAGE = 71,
  PIXEL_FORMAT_HSV_888_PLANAR = 72,
  PIXEL_FORMAT_LAB_888_PACKAGE = 73,
  PIXEL_FORMAT_LAB_888_PLANAR = 74,
  PIXEL_FORMAT_S8C1 = 75,
  PIXEL_FORMAT_S8C2_PACKAGE = 76,
  PIXEL_FORMAT_S8C2_PLANAR = 77,
  PIXEL_FORMAT_S16C1 = 78,
  PIXEL_FORMAT_U8C1 = 79,
  PIXEL_FORMAT_U16C1 = 80,
  PIXEL_FORMAT_S32C1 = 81,
  PIXEL_FORMAT_U32C1 = 82,
  PIXEL_FORMAT_U64C1 = 83,
  PIXEL_FORMAT_S64C1 = 84,
  PIXEL_FORMAT_YUV_SEMIPLANAR_440 = 1000,
  PIXEL_FORMAT_YVU_SEMIPLANAR_440 = 1001,
  PIXEL_FORMAT_FLOAT32 = 1002,
  PIXEL_FORMAT_BUTT = 1003,
  PIXEL_FORMAT_UNKNOWN = 10000 /* decoders: "as the source picture is" */
} acldvppPixelFormat;

/* Video stream formats (video decode/encode is not implemented yet). */
typedef enum acldvppStreamFormat {
  H265_MAIN_LEVEL = 0,
  H264_BASELINE_LEVEL = 1,
  H264_MAIN_LEVEL = 2,
  H264_HIGH_LEVEL = 3
} acldvppStreamFormat;

/* What a channel may be used for (acldvppSetChannelDescMode); 0, the default,
 * allows everything. Bits may be combined. */
typedef enum acldvppChannelMode {
  DVPP_CHNMODE_VPC = 1,
  DVPP_CHNMODE_JPEGD = 2,
  DVPP_CHNMODE_JPEGE = 4,
  DVPP_CHNMODE_PNGD = 8
} acldvppChannelMode;

typedef enum acldvppBorderType {
  BORDER_CONSTANT = 0,
  BORDER_REPLICATE = 1,
  BORDER_REFLECT = 2,
  BORDER_REFLECT_101 = 3
} acldvppBorderType;

/* Chroma subsampling of a JPEG file (acldvppJpegGetImageInfoV2). */
typedef enum acldvppJpegFormat {
  ACL_JPEG_CSS_444 = 0,
  ACL_JPEG_CSS_422 = 1,
  ACL_JPEG_CSS_420 = 2,
  ACL_JPEG_CSS_GRAY = 3,
  ACL_JPEG_CSS_440 = 4,
  ACL_JPEG_CSS_411 = 5,
  ACL_JPEG_CSS_UNKNOWN = 1000
} acldvppJpegFormat;

/* ---- DVPP memory ---------------------------------------------------------------- */

/* Allocates device memory the media calls accept: `size` rounded up to a
 * multiple of 32 plus 32 bytes (as CANN does), 64-byte aligned, uninitialised.
 * It is device memory for aclrtMemcpy. Owned by the caller: free it with
 * acldvppFree (aclrtFree refuses it). ACL_ERROR_INVALID_PARAM for NULL or size
 * 0; ACL_ERROR_BAD_ALLOC; ACL_ERROR_RT_CONTEXT_NULL without a current context. */
ACL_FUNC_VISIBILITY aclError acldvppMalloc(void **devPtr, size_t size);
/* Frees memory from acldvppMalloc; anything else is refused with
 * ACL_ERROR_INVALID_PARAM. Work still queued on it must have finished. */
ACL_FUNC_VISIBILITY aclError acldvppFree(void *devPtr);

/* ---- Channels ------------------------------------------------------------------- */

/* A new channel description (mode 0: every kind of job), or NULL on failure. */
ACL_FUNC_VISIBILITY acldvppChannelDesc *acldvppCreateChannelDesc(void);
/* Destroys a channel description; its channel must have been destroyed first
 * (ACL_ERROR_INVALID_PARAM otherwise). */
ACL_FUNC_VISIBILITY aclError acldvppDestroyChannelDesc(acldvppChannelDesc *channelDesc);
/* The id acldvppCreateChannel gave the channel (0 before). */
ACL_FUNC_VISIBILITY uint64_t acldvppGetChannelDescChannelId(const acldvppChannelDesc *channelDesc);
/* Restricts the channel to the acldvppChannelMode bits in `mode` (0: all).
 * Must be called before acldvppCreateChannel. */
ACL_FUNC_VISIBILITY aclError acldvppSetChannelDescMode(acldvppChannelDesc *channelDesc, uint32_t mode);
/* Opens the channel the media calls run on. ACL_ERROR_INVALID_PARAM when the
 * description is unknown or its channel already exists. */
ACL_FUNC_VISIBILITY aclError acldvppCreateChannel(acldvppChannelDesc *channelDesc);
/* Closes the channel; jobs already queued on streams still run. */
ACL_FUNC_VISIBILITY aclError acldvppDestroyChannel(acldvppChannelDesc *channelDesc);

/* ---- Picture descriptions -------------------------------------------------------- */

/* A new picture description: no data, size 0, format PIXEL_FORMAT_YUV_400,
 * width/height/strides 0, retCode 0. NULL on failure. */
ACL_FUNC_VISIBILITY acldvppPicDesc *acldvppCreatePicDesc(void);
/* Destroys a description from acldvppCreatePicDesc (not one inside a batch). */
ACL_FUNC_VISIBILITY aclError acldvppDestroyPicDesc(acldvppPicDesc *picDesc);
/* The setters store the value; it is checked by the call the description is
 * given to. Data must be DVPP memory by then. widthStride is in bytes per row
 * (for RGB888: at least width * 3). */
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescData(acldvppPicDesc *picDesc, void *dataDev);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescSize(acldvppPicDesc *picDesc, uint32_t size);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescFormat(acldvppPicDesc *picDesc, acldvppPixelFormat format);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescWidth(acldvppPicDesc *picDesc, uint32_t width);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescHeight(acldvppPicDesc *picDesc, uint32_t height);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescWidthStride(acldvppPicDesc *picDesc, uint32_t widthStride);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescHeightStride(acldvppPicDesc *picDesc, uint32_t heightStride);
ACL_FUNC_VISIBILITY aclError acldvppSetPicDescRetCode(acldvppPicDesc *picDesc, uint32_t retCode);
/* Getters. A decoder writes the decoded picture's format, width, height and
 * strides back into its output description when the job runs, and every job
 * writes retCode (0: done, non-zero: failed) into its output description. */
ACL_FUNC_VISIBILITY void *acldvppGetPicDescData(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescSize(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY acldvppPixelFormat acldvppGetPicDescFormat(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescWidth(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescHeight(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescWidthStride(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescHeightStride(const acldvppPicDesc *picDesc);
ACL_FUNC_VISIBILITY uint32_t acldvppGetPicDescRetCode(const acldvppPicDesc *picDesc);

/* ---- Batches of picture descriptions --------------------------------------------- */

/* `batchSize` (1..1024) picture descriptions owned by the batch; NULL on failure. */
ACL_FUNC_VISIBILITY acldvppBatchPicDesc *acldvppCreateBatchPicDesc(uint32_t batchSize);
/* The description at `index`, owned by the batch (do not destroy it); NULL
 * when the index is out of range. */
ACL_FUNC_VISIBILITY acldvppPicDesc *acldvppGetPicDesc(acldvppBatchPicDesc *batchPicDesc, uint32_t index);
ACL_FUNC_VISIBILITY aclError acldvppDestroyBatchPicDesc(acldvppBatchPicDesc *batchPicDesc);

/* ---- Regions of interest --------------------------------------------------------- */

/* A rectangle given by its inclusive pixel edges: columns left..right, rows
 * top..bottom. For YUV420SP pictures left and top must be even, right and
 * bottom odd (checked by the call it is given to). NULL on failure. */
ACL_FUNC_VISIBILITY acldvppRoiConfig *acldvppCreateRoiConfig(uint32_t left, uint32_t right, uint32_t top,
                                                             uint32_t bottom);
ACL_FUNC_VISIBILITY aclError acldvppDestroyRoiConfig(acldvppRoiConfig *roiConfig);
ACL_FUNC_VISIBILITY aclError acldvppSetRoiConfigLeft(acldvppRoiConfig *config, uint32_t left);
ACL_FUNC_VISIBILITY aclError acldvppSetRoiConfigRight(acldvppRoiConfig *config, uint32_t right);
ACL_FUNC_VISIBILITY aclError acldvppSetRoiConfigTop(acldvppRoiConfig *config, uint32_t top);
ACL_FUNC_VISIBILITY aclError acldvppSetRoiConfigBottom(acldvppRoiConfig *config, uint32_t bottom);
ACL_FUNC_VISIBILITY aclError acldvppSetRoiConfig(acldvppRoiConfig *config, uint32_t left, uint32_t right,
                                                 uint32_t top, uint32_t bottom);

/* ---- Resize configuration -------------------------------------------------------- */

/* A resize configuration with interpolation 0. NULL on failure. */
ACL_FUNC_VISIBILITY acldvppResizeConfig *acldvppCreateResizeConfig(void);
ACL_FUNC_VISIBILITY aclError acldvppDestroyResizeConfig(acldvppResizeConfig *resizeConfig);
/* 0 (default) and 1: bilinear with OpenCV's pixel-centre convention
 * (cv::INTER_LINEAR); 2: nearest neighbour as cv::INTER_NEAREST; 3: bilinear
 * as TensorFlow 1's resize_bilinear (corners not aligned, no half-pixel
 * offset); 4: nearest neighbour with half-pixel centres (TensorFlow 2,
 * cv::INTER_NEAREST_EXACT). ACL_ERROR_INVALID_PARAM for other values. */
ACL_FUNC_VISIBILITY aclError acldvppSetResizeConfigInterpolation(acldvppResizeConfig *resizeConfig,
                                                                 uint32_t interpolation);
ACL_FUNC_VISIBILITY uint32_t acldvppGetResizeConfigInterpolation(const acldvppResizeConfig *resizeConfig);

/* ---- JPEG encode configuration --------------------------------------------------- */

/* A JPEG encode configuration with level 100. NULL on failure. */
ACL_FUNC_VISIBILITY acldvppJpegeConfig *acldvppCreateJpegeConfig(void);
ACL_FUNC_VISIBILITY aclError acldvppDestroyJpegeConfig(acldvppJpegeConfig *jpegeConfig);
/* Quality level 0..100: 1 is the lowest quality, 100 the highest, and 0 reads
 * as 100. ACL_ERROR_INVALID_PARAM above 100. */
ACL_FUNC_VISIBILITY aclError acldvppSetJpegeConfigLevel(acldvppJpegeConfig *jpegeConfig, uint32_t level);
ACL_FUNC_VISIBILITY uint32_t acldvppGetJpegeConfigLevel(const acldvppJpegeConfig *jpegeConfig);

/* ---- JPEG ----------------------------------------------------------------------- */

/* Reads a JPEG file's header in host memory: width, height and number of
 * colour components (either output pointer may be NULL). Progressive files are
 * described too, though the decoder refuses them. ACL_ERROR_INVALID_PARAM for
 * data that is not a JPEG header (the message says what is wrong and where). */
ACL_FUNC_VISIBILITY aclError acldvppJpegGetImageInfo(const void *data, uint32_t size, uint32_t *width,
                                                     uint32_t *height, int32_t *components);
/* As acldvppJpegGetImageInfo, also writing the chroma subsampling (NULL allowed). */
ACL_FUNC_VISIBILITY aclError acldvppJpegGetImageInfoV2(const void *data, uint32_t size, uint32_t *width,
                                                       uint32_t *height, int32_t *components,
                                                       acldvppJpegFormat *format);
/* The output buffer size acldvppJpegDecodeAsync needs for this file decoded
 * to `outputPixelFormat` (PIXEL_FORMAT_UNKNOWN: the format the source decodes
 * to by default): widthStride (width aligned to 128) * heightStride (height
 * aligned to 16) * the format's bytes per pixel. */
ACL_FUNC_VISIBILITY aclError acldvppJpegPredictDecSize(const void *data, uint32_t dataSize,
                                                       acldvppPixelFormat outputPixelFormat, uint32_t *decSize);
/* An upper bound of the encoded size of `inputDesc`'s picture. */
ACL_FUNC_VISIBILITY aclError acldvppJpegPredictEncSize(const acldvppPicDesc *inputDesc,
                                                       const acldvppJpegeConfig *config, uint32_t *size);
/* Queues the decode of the JPEG file at `data` (`size` bytes of DVPP memory)
 * into outputDesc's buffer, in the format outputDesc names: NV12 or NV21 from
 * any subsampling (4:0:0 gets chroma 0x80), YUV422SP/YVU422SP from 4:2:2,
 * YUV444SP/YVU444SP from 4:4:4, YUV400 (Y only) from any, or
 * PIXEL_FORMAT_UNKNOWN for the source's own (4:4:4 -> YUV444SP, 4:2:2 ->
 * YUV422SP, others -> NV12); a description whose format was never set
 * decodes to NV12. Baseline and extended sequential Huffman files
 * of 8-bit precision, 32..8192 pixels a side. The call checks the
 * descriptions; the file itself is read when the job runs, and a file the
 * decoder refuses (corrupt, truncated, or of a kind not supported: the
 * message says which) fails the job: aclrtSynchronizeStream returns
 * ACL_ERROR_INVALID_PARAM with the message, and outputDesc's retCode becomes
 * non-zero. */
ACL_FUNC_VISIBILITY aclError acldvppJpegDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
                                                    acldvppPicDesc *outputDesc, aclrtStream stream);
/* Queues the JPEG encode of inputDesc's picture (NV12 or NV21, 32..8192 pixels
 * a side; widthStride a multiple of 16) into `data` (DVPP memory of `*size`
 * bytes). When the job has run, `*size` holds the encoded size; `size` must
 * stay valid until then. A buffer too small for the result fails the job. */
ACL_FUNC_VISIBILITY aclError acldvppJpegEncodeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                    const void *data, uint32_t *size, acldvppJpegeConfig *config,
                                                    aclrtStream stream);

/* ---- PNG ------------------------------------------------------------------------ */

/* Reads a PNG file's header in host memory: width, height and components (1
 * gray, 2 gray+alpha, 3 RGB or palette, 4 RGBA or palette/RGB/gray with a
 * transparency chunk). ACL_ERROR_INVALID_PARAM for data that is not a PNG. */
ACL_FUNC_VISIBILITY aclError acldvppPngGetImageInfo(const void *data, uint32_t dataSize, uint32_t *width,
                                                    uint32_t *height, int32_t *components);
/* The output buffer size acldvppPngDecodeAsync needs: widthStride (width * 3
 * for RGB888 or * 4 for RGBA8888, aligned to 128) * heightStride (height
 * aligned to 16). PIXEL_FORMAT_UNKNOWN: RGBA8888 when the file has alpha,
 * else RGB888. */
ACL_FUNC_VISIBILITY aclError acldvppPngPredictDecSize(const void *data, uint32_t dataSize,
                                                      acldvppPixelFormat outputPixelFormat, uint32_t *decSize);
/* Queues the decode of the PNG file at `data` (DVPP memory) to RGB888 or
 * RGBA8888 (or PIXEL_FORMAT_UNKNOWN, as acldvppPngPredictDecSize, which is
 * also what a description whose format was never set gets). 16-bit
 * samples keep their high byte; RGB888 drops alpha. 32..4096 pixels a side.
 * Errors as acldvppJpegDecodeAsync. */
ACL_FUNC_VISIBILITY aclError acldvppPngDecodeAsync(acldvppChannelDesc *channelDesc, const void *data, uint32_t size,
                                                   acldvppPicDesc *outputDesc, aclrtStream stream);

/* ---- VPC -------------------------------------------------------------------------
 * Pictures: YUV400, NV12, NV21, RGB888 and BGR888, 10..4096 pixels wide and
 * 6..4096 high; widthStride a multiple of 16, at least 32 and at least
 * width * bytes per pixel; heightStride even and at least height; the buffer at least
 * widthStride * heightStride * (1.5 for NV12/NV21, 1 otherwise) bytes. The
 * output keeps the input's family (NV12 and NV21 may be exchanged, as may
 * RGB888 and BGR888); YUV420SP outputs have even width and height. Scaling
 * ratios per axis lie in [1/32, 16]. A NULL resizeConfig means interpolation 0.
 * Every rule broken is refused at the call with ACL_ERROR_INVALID_PARAM and a
 * message naming the parameter, its value and what is allowed. */

/* Resizes the whole input picture to the output's width and height. */
ACL_FUNC_VISIBILITY aclError acldvppVpcResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                   acldvppPicDesc *outputDesc, acldvppResizeConfig *resizeConfig,
                                                   aclrtStream stream);
/* Cuts cropArea out of the input and resizes it to the output's size. */
ACL_FUNC_VISIBILITY aclError acldvppVpcCropAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                 acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                                 aclrtStream stream);
/* As acldvppVpcCropAsync with a resize configuration. */
ACL_FUNC_VISIBILITY aclError acldvppVpcCropResizeAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                       acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                                       acldvppResizeConfig *resizeConfig, aclrtStream stream);
/* Cuts cropArea out of the input, resizes it to pasteArea's size and writes it
 * there in the output picture; the rest of the output is left as it was.
 * pasteArea: left a multiple of 16; for YUV420SP top even, right and bottom odd. */
ACL_FUNC_VISIBILITY aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                         acldvppPicDesc *outputDesc, acldvppRoiConfig *cropArea,
                                                         acldvppRoiConfig *pasteArea, aclrtStream stream);
/* As acldvppVpcCropAndPasteAsync with a resize configuration. */
ACL_FUNC_VISIBILITY aclError acldvppVpcCropResizePasteAsync(acldvppChannelDesc *channelDesc,
                                                            acldvppPicDesc *inputDesc, acldvppPicDesc *outputDesc,
                                                            acldvppRoiConfig *cropArea, acldvppRoiConfig *pasteArea,
                                                            acldvppResizeConfig *resizeConfig, aclrtStream stream);
/* Converts between YUV400, NV12, NV21, RGB888 and BGR888 without resizing
 * (BT.601 full range, the JPEG/JFIF matrix; chroma is averaged over 2x2 pixels
 * going to NV12/NV21 and repeated coming from them). Output width and height
 * equal the input's; 0 in the output's width, height or strides means "the
 * same as the input / the smallest allowed", and is written back. */
ACL_FUNC_VISIBILITY aclError acldvppVpcConvertColorAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                         acldvppPicDesc *outputDesc, aclrtStream stream);

/* Not implemented yet: each returns ACL_ERROR_FEATURE_UNSUPPORTED with a
 * message naming the call (docs/dvpp.md). */
ACL_FUNC_VISIBILITY aclError acldvppVpcBatchCropAsync(acldvppChannelDesc *channelDesc,
                                                      acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums,
                                                      uint32_t size, acldvppBatchPicDesc *dstBatchPicDescs,
                                                      acldvppRoiConfig *cropAreas[], aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcBatchCropResizeAsync(acldvppChannelDesc *channelDesc,
                                                            acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums,
                                                            uint32_t size, acldvppBatchPicDesc *dstBatchPicDescs,
                                                            acldvppRoiConfig *cropAreas[],
                                                            acldvppResizeConfig *resizeConfig, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcBatchCropAndPasteAsync(acldvppChannelDesc *channelDesc,
                                                              acldvppBatchPicDesc *srcBatchPicDescs,
                                                              uint32_t *roiNums, uint32_t size,
                                                              acldvppBatchPicDesc *dstBatchPicDescs,
                                                              acldvppRoiConfig *cropAreas[],
                                                              acldvppRoiConfig *pasteAreas[], aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcBatchCropResizePasteAsync(
    acldvppChannelDesc *channelDesc, acldvppBatchPicDesc *srcBatchPicDescs, uint32_t *roiNums, uint32_t size,
    acldvppBatchPicDesc *dstBatchPicDescs, acldvppRoiConfig *cropAreas[], acldvppRoiConfig *pasteAreas[],
    acldvppResizeConfig *resizeConfig, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError acldvppVpcPyrDownAsync(acldvppChannelDesc *channelDesc, acldvppPicDesc *inputDesc,
                                                    acldvppPicDesc *outputDesc, void *reserve, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_OPS_ACL_DVPP_H_ */
