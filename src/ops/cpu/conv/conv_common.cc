#include "ops/cpu/conv/conv_common.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace oc {

std::string ShapeToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + (v[i] < 0 ? std::string("?") : std::to_string(v[i]));
  return s + "]";
}

namespace {

std::string Join(const std::vector<int64_t>& v) { return ShapeToString(v); }

// Reads the attributes common to Conv and ConvTranspose, checks ranks and
// sizes, and fills kernel/stride/dilation and explicit pads (3-D padded).
Status ResolveCommon(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                     ConvGeometry& g) {
  if (x.size() < 3 || x.size() > 5)
    return NotSupported(node.Describe(), ": input X must have rank 3, 4 or 5 ([N, C, spatial...]), got ",
                        Join(x));
  if (w.size() != x.size())
    return InvalidArgument(node.Describe(), ": weight W has rank ", w.size(), " ", Join(w),
                           " but X has rank ", x.size(), " ", Join(x));
  g.nd = static_cast<int>(x.size()) - 2;
  const int off = 3 - g.nd;
  g.batch = x[0];
  g.group = node.GetInt("group", 1);
  if (g.group < 1) return InvalidArgument(node.Describe(), ": group must be >= 1, got ", g.group);
  std::vector<int64_t> ks = node.GetInts("kernel_shape");
  if (!ks.empty() && ks.size() != static_cast<size_t>(g.nd))
    return InvalidArgument(node.Describe(), ": kernel_shape ", Join(ks), " must have ", g.nd,
                           " values (one per spatial dim)");
  for (int i = 0; i < g.nd; ++i) {
    const int64_t wk = w[2 + i];
    if (!ks.empty() && wk >= 0 && ks[i] != wk)
      return InvalidArgument(node.Describe(), ": kernel_shape ", Join(ks),
                             " does not match the spatial dims of W ", Join(w));
    const int64_t k = ks.empty() ? wk : ks[i];
    if (k == 0 || k < -1) return InvalidArgument(node.Describe(), ": kernel dim ", i, " is ", k);
    g.kernel[off + i] = k;
    g.in[off + i] = x[2 + i];
  }
  auto read = [&](const char* name, int64_t def, std::array<int64_t, 3>& dst) -> Status {
    std::vector<int64_t> v = node.GetInts(name);
    if (v.empty()) return Status::Ok();
    if (v.size() != static_cast<size_t>(g.nd))
      return InvalidArgument(node.Describe(), ": ", name, " ", Join(v), " must have ", g.nd, " values");
    for (int i = 0; i < g.nd; ++i) {
      if (v[i] < 1) return InvalidArgument(node.Describe(), ": ", name, " must be >= 1, got ", Join(v));
      dst[off + i] = v[i];
    }
    (void)def;
    return Status::Ok();
  };
  OC_RETURN_IF_ERROR(read("strides", 1, g.stride));
  OC_RETURN_IF_ERROR(read("dilations", 1, g.dilation));
  std::vector<int64_t> pads = node.GetInts("pads");
  if (!pads.empty()) {
    if (pads.size() != static_cast<size_t>(2 * g.nd))
      return InvalidArgument(node.Describe(), ": pads ", Join(pads), " must have ", 2 * g.nd,
                             " values (begins then ends)");
    for (int i = 0; i < g.nd; ++i) {
      if (pads[i] < 0 || pads[g.nd + i] < 0)
        return InvalidArgument(node.Describe(), ": pads must be >= 0, got ", Join(pads));
      g.pad_begin[off + i] = pads[i];
      g.pad_end[off + i] = pads[g.nd + i];
    }
  }
  return Status::Ok();
}

Expected<int> AutoPadKind(const Node& node) {
  std::string ap = node.GetString("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty()) return 0;
  if (ap == "SAME_UPPER") return 1;
  if (ap == "SAME_LOWER") return 2;
  if (ap == "VALID") return 3;
  return InvalidArgument(node.Describe(), ": auto_pad '", ap,
                         "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

}  // namespace

std::vector<int64_t> ConvGeometry::OutputShape() const {
  std::vector<int64_t> s = {batch, c_out};
  for (int i = 3 - nd; i < 3; ++i) s.push_back(out[i]);
  return s;
}

Expected<ConvGeometry> ResolveConv(const Node& node, const std::vector<int64_t>& x,
                                   const std::vector<int64_t>& w) {
  ConvGeometry g;
  OC_RETURN_IF_ERROR(ResolveCommon(node, x, w, g));
  g.c_in = x[1];
  g.c_out = w[0];
  if (g.c_out >= 0 && g.c_out % g.group != 0)
    return InvalidArgument(node.Describe(), ": W has ", g.c_out, " output channels, not divisible by group ",
                           g.group);
  if (g.c_in >= 0 && w[1] >= 0 && g.c_in != w[1] * g.group)
    return InvalidArgument(node.Describe(), ": X has ", g.c_in, " channels but W ", Join(w), " with group ",
                           g.group, " expects ", w[1] * g.group);
  OC_ASSIGN_OR_RETURN(int ap, AutoPadKind(node));
  for (int i = 3 - g.nd; i < 3; ++i) {
    const int64_t in = g.in[i], s = g.stride[i];
    const int64_t dk = g.kernel[i] < 0 ? -1 : (g.kernel[i] - 1) * g.dilation[i] + 1;
    if (ap == 1 || ap == 2) {
      if (in < 0 || dk < 0) { g.out[i] = -1; continue; }
      g.out[i] = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + dk - in);
      g.pad_begin[i] = ap == 1 ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (ap == 3) g.pad_begin[i] = g.pad_end[i] = 0;
    if (in < 0 || dk < 0) { g.out[i] = -1; continue; }
    const int64_t span = in + g.pad_begin[i] + g.pad_end[i] - dk;
    if (span < 0)
      return InvalidArgument(node.Describe(), ": spatial dim ", i - (3 - g.nd), " of size ", in,
                             " (padded ", in + g.pad_begin[i] + g.pad_end[i],
                             ") is smaller than the dilated kernel ", dk);
    g.out[i] = span / s + 1;
  }
  return g;
}

Expected<ConvGeometry> ResolveConvTranspose(const Node& node, const std::vector<int64_t>& x,
                                            const std::vector<int64_t>& w) {
  ConvGeometry g;
  OC_RETURN_IF_ERROR(ResolveCommon(node, x, w, g));
  g.c_in = x[1];
  if (g.c_in >= 0 && w[0] >= 0 && g.c_in != w[0])
    return InvalidArgument(node.Describe(), ": X has ", g.c_in, " channels but W ", Join(w),
                           " expects ", w[0], " (W is [C_in, C_out/group, k...])");
  if (w[0] >= 0 && w[0] % g.group != 0)
    return InvalidArgument(node.Describe(), ": W has ", w[0], " input channels, not divisible by group ",
                           g.group);
  g.c_out = w[1] < 0 ? -1 : w[1] * g.group;
  OC_ASSIGN_OR_RETURN(int ap, AutoPadKind(node));
  const int off = 3 - g.nd;
  std::vector<int64_t> out_pad = node.GetInts("output_padding");
  if (!out_pad.empty() && out_pad.size() != static_cast<size_t>(g.nd))
    return InvalidArgument(node.Describe(), ": output_padding ", Join(out_pad), " must have ", g.nd, " values");
  std::vector<int64_t> out_shape = node.GetInts("output_shape");
  if (out_shape.size() == static_cast<size_t>(g.nd + 2))
    out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != static_cast<size_t>(g.nd))
    return InvalidArgument(node.Describe(), ": output_shape ", Join(out_shape), " must have ", g.nd,
                           " values");
  for (int i = 0; i < g.nd; ++i) {
    const int d = off + i;
    const int64_t op = out_pad.empty() ? 0 : out_pad[i];
    if (op < 0) return InvalidArgument(node.Describe(), ": output_padding must be >= 0");
    const int64_t in = g.in[d], s = g.stride[d];
    const int64_t dk = g.kernel[d] < 0 ? -1 : (g.kernel[d] - 1) * g.dilation[d] + 1;
    if (in < 0 || dk < 0) { g.out[d] = -1; continue; }
    const int64_t full = s * (in - 1) + op + dk;
    if (!out_shape.empty() || ap == 1 || ap == 2) {
      // Target size given (or implied by SAME_*): pads follow from it, more on
      // the end for SAME_UPPER and on the begin otherwise (as ONNX specifies).
      const int64_t target = out_shape.empty() ? in * s : out_shape[i];
      if (target < 1) return InvalidArgument(node.Describe(), ": output_shape must be >= 1");
      const int64_t total = full - target;
      // Halved rounding down, as ONNX defines it: a target past the full extent
      // (negative total) grows the end, like output_padding, not the begin.
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      if (ap == 1) {
        g.pad_begin[d] = half;
        g.pad_end[d] = total - half;
      } else {
        g.pad_begin[d] = total - half;
        g.pad_end[d] = half;
      }
      g.out[d] = target;
      continue;
    }
    if (ap == 3) g.pad_begin[d] = g.pad_end[d] = 0;
    g.out[d] = full - g.pad_begin[d] - g.pad_end[d];
    if (g.out[d] < 1)
      return InvalidArgument(node.Describe(), ": output spatial dim ", i, " would be ", g.out[d],
                             " (pads larger than the transposed extent ", full, ")");
  }
  return g;
}

void Col2ImAdd(const ConvGeometry& g, const float* col, int64_t ldcol, int64_t p0, int64_t np,
               float* y, int64_t channel_begin, int64_t channel_end) {
  const int64_t kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  const int64_t ksize = kd * kh * kw;
  const int64_t IH = g.in[1], IW = g.in[2];
  const int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const int64_t out_size = OD * OH * OW;
  for (int64_t c = channel_begin; c < channel_end; ++c) {
    float* yc = y + c * out_size;
    for (int64_t kk = 0; kk < ksize; ++kk) {
      const int64_t kx = kk % kw, ky = (kk / kw) % kh, kz = kk / (kw * kh);
      const float* src = col + (c * ksize + kk) * ldcol;
      int64_t p = p0;
      const int64_t pend = p0 + np;
      while (p < pend) {
        const int64_t ix0 = p % IW;
        const int64_t iy = (p / IW) % IH;
        const int64_t iz = p / (IW * IH);
        const int64_t run = std::min(IW - ix0, pend - p);
        const float* s = src + (p - p0);
        const int64_t oz = iz * g.stride[0] - g.pad_begin[0] + kz * g.dilation[0];
        const int64_t oy = iy * g.stride[1] - g.pad_begin[1] + ky * g.dilation[1];
        if (oz >= 0 && oz < OD && oy >= 0 && oy < OH) {
          float* yrow = yc + (oz * OH + oy) * OW;
          const int64_t sw = g.stride[2];
          const int64_t base = -g.pad_begin[2] + kx * g.dilation[2];
          for (int64_t j = 0; j < run; ++j) {
            const int64_t ox = (ix0 + j) * sw + base;
            if (ox >= 0 && ox < OW) yrow[ox] += s[j];
          }
        }
        p += run;
      }
    }
  }
}

}  // namespace oc
