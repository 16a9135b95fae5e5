/* A DVPP application written the way CANN's image samples are: read a JPEG,
 * ask for its size, decode it to NV12 on a stream, resize the picture to
 * 224x224 with the VPC, and write both pictures out (their valid rows only:
 * Y then the interleaved chroma) for tests/python/test_dvpp.py to compare
 * against PIL and OpenCV. Also checks that misuse is refused with a message.
 * Usage: acl_dvpp <in.jpg> <decoded.yuv> <resized.yuv> */
#define ENABLE_DVPP_INTERFACE
#include "acl/ops/acl_dvpp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"

enum { kOutW = 224, kOutH = 224 };

static unsigned char* ReadFile(const char* path, uint32_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* buf = (unsigned char*)malloc((size_t)n);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (uint32_t)n;
  return buf;
}

/* Copies the valid part of an NV12 picture in device memory to a file. */
static int WriteNv12(const char* path, const void* dev, uint32_t w, uint32_t h, uint32_t ws, uint32_t hs) {
  size_t total = (size_t)ws * hs * 3 / 2;
  unsigned char* host = (unsigned char*)malloc(total);
  FILE* f = fopen(path, "wb");
  uint32_t y;
  if (!host || !f || aclrtMemcpy(host, total, dev, total, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return 0;
  for (y = 0; y < h; ++y) fwrite(host + (size_t)y * ws, 1, w, f);
  for (y = 0; y < (h + 1) / 2; ++y) fwrite(host + (size_t)ws * hs + (size_t)y * ws, 1, (w + 1) / 2 * 2, f);
  fclose(f);
  free(host);
  return 1;
}

int main(int argc, char** argv) {
  uint32_t file_size = 0, width = 0, height = 0, dec_size = 0;
  int32_t components = 0;
  acldvppJpegFormat subsampling = ACL_JPEG_CSS_UNKNOWN;
  aclrtStream stream = NULL;
  void *in_dev = NULL, *dec_dev = NULL, *out_dev = NULL, *plain = NULL;
  acldvppChannelDesc* channel;
  acldvppPicDesc *dec_desc, *out_desc;
  acldvppResizeConfig* resize;
  acldvppRoiConfig* bad_roi;
  unsigned char* file;
  uint32_t ws, hs, out_size = kOutW * kOutH * 3 / 2;

  if (argc != 4) {
    fprintf(stderr, "usage: acl_dvpp <in.jpg> <decoded.yuv> <resized.yuv>\n");
    return 2;
  }
  file = ReadFile(argv[1], &file_size);
  if (!file) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  EXPECT_OK(aclInit(NULL));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtCreateStream(&stream));
  channel = acldvppCreateChannelDesc();
  EXPECT_TRUE(channel != NULL);
  EXPECT_OK(acldvppCreateChannel(channel));

  /* The file's size and the decoder's output size come from host memory. */
  EXPECT_OK(acldvppJpegGetImageInfoV2(file, file_size, &width, &height, &components, &subsampling));
  EXPECT_OK(acldvppJpegPredictDecSize(file, file_size, PIXEL_FORMAT_YUV_SEMIPLANAR_420, &dec_size));
  ws = (width + 127) / 128 * 128;
  hs = (height + 15) / 16 * 16;
  EXPECT_TRUE(dec_size == ws * hs * 3 / 2);

  EXPECT_OK(acldvppMalloc(&in_dev, file_size));
  EXPECT_OK(aclrtMemcpy(in_dev, file_size, file, file_size, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_OK(acldvppMalloc(&dec_dev, dec_size));
  dec_desc = acldvppCreatePicDesc();
  EXPECT_OK(acldvppSetPicDescData(dec_desc, dec_dev));
  EXPECT_OK(acldvppSetPicDescSize(dec_desc, dec_size));
  EXPECT_OK(acldvppSetPicDescFormat(dec_desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420));
  EXPECT_OK(acldvppJpegDecodeAsync(channel, in_dev, file_size, dec_desc, stream));
  EXPECT_OK(aclrtSynchronizeStream(stream));
  EXPECT_TRUE(acldvppGetPicDescRetCode(dec_desc) == 0);
  EXPECT_TRUE(acldvppGetPicDescWidth(dec_desc) == width && acldvppGetPicDescHeight(dec_desc) == height);
  EXPECT_TRUE(acldvppGetPicDescWidthStride(dec_desc) == ws && acldvppGetPicDescHeightStride(dec_desc) == hs);

  /* Resize: the decoded picture (its strides meet the VPC's) to 224x224. */
  EXPECT_OK(acldvppMalloc(&out_dev, out_size));
  out_desc = acldvppCreatePicDesc();
  EXPECT_OK(acldvppSetPicDescData(out_desc, out_dev));
  EXPECT_OK(acldvppSetPicDescSize(out_desc, out_size));
  EXPECT_OK(acldvppSetPicDescFormat(out_desc, PIXEL_FORMAT_YUV_SEMIPLANAR_420));
  EXPECT_OK(acldvppSetPicDescWidth(out_desc, kOutW));
  EXPECT_OK(acldvppSetPicDescHeight(out_desc, kOutH));
  EXPECT_OK(acldvppSetPicDescWidthStride(out_desc, kOutW));
  EXPECT_OK(acldvppSetPicDescHeightStride(out_desc, kOutH));
  resize = acldvppCreateResizeConfig();
  EXPECT_OK(acldvppSetResizeConfigInterpolation(resize, 1));
  EXPECT_OK(acldvppVpcResizeAsync(channel, dec_desc, out_desc, resize, stream));
  EXPECT_OK(aclrtSynchronizeStream(stream));
  EXPECT_TRUE(WriteNv12(argv[2], dec_dev, width, height, ws, hs));
  EXPECT_TRUE(WriteNv12(argv[3], out_dev, kOutW, kOutH, kOutW, kOutH));

  /* Misuse: memory not from acldvppMalloc, an odd crop edge, a bad
   * interpolation, a DVPP block freed with aclrtFree. */
  EXPECT_OK(aclrtMalloc(&plain, dec_size, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(acldvppSetPicDescData(out_desc, plain));
  EXPECT_CODE(acldvppVpcResizeAsync(channel, dec_desc, out_desc, resize, stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_TRUE(strstr(aclGetRecentErrMsg(), "not DVPP memory") != NULL);
  EXPECT_OK(acldvppSetPicDescData(out_desc, out_dev));
  bad_roi = acldvppCreateRoiConfig(1, 100, 0, 99);
  EXPECT_CODE(acldvppVpcCropAsync(channel, dec_desc, out_desc, bad_roi, stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_TRUE(strstr(aclGetRecentErrMsg(), "cropArea left 1 must be even") != NULL);
  EXPECT_CODE(acldvppSetResizeConfigInterpolation(resize, 7), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtFree(out_dev), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(acldvppFree(plain), ACL_ERROR_INVALID_PARAM);

  EXPECT_OK(acldvppDestroyRoiConfig(bad_roi));
  EXPECT_OK(acldvppDestroyResizeConfig(resize));
  EXPECT_OK(acldvppDestroyPicDesc(out_desc));
  EXPECT_OK(acldvppDestroyPicDesc(dec_desc));
  EXPECT_CODE(acldvppDestroyChannelDesc(channel), ACL_ERROR_INVALID_PARAM); /* channel still open */
  EXPECT_OK(acldvppDestroyChannel(channel));
  EXPECT_OK(acldvppDestroyChannelDesc(channel));
  EXPECT_OK(aclrtFree(plain));
  EXPECT_OK(acldvppFree(out_dev));
  EXPECT_OK(acldvppFree(dec_dev));
  EXPECT_OK(acldvppFree(in_dev));
  EXPECT_OK(aclrtDestroyStream(stream));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  free(file);
  printf("%ux%u, %d components, subsampling %d\n", width, height, components, (int)subsampling);
  return Summary("acl_dvpp");
}
