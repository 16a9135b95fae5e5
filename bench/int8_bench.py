#!/usr/bin/env python3
"""ResNet-50 int8 (atc --precision_mode=int8, post-training calibration) vs float32.

Calibrates on --calib smooth synthetic images (bench/bf16_bench.py's generator,
a different seed from the evaluation images), compiles both .om files, measures
run latency at --threads with bench/model_bench (alternating processes, medians
and process CPU time per run), and compares top-1 of the two models over --images
further synthetic images (msame, batch --batch). Prints a markdown block."""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bf16_bench as bb  # noqa: E402
import model_bench as mb  # noqa: E402


def atc(build, onnx_path, stem, shape, extra=()):
    import subprocess
    cmd = [os.path.join(build, "atc"), f"--model={onnx_path}", "--framework=5", f"--output={stem}",
           f"--input_shape=input:{shape}", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"atc failed: {(p.stdout + p.stderr)[-2000:]}")
    return stem + ".om", p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.environ.get("OC_BUILD_DIR", os.path.join(HERE, "..", "build")))
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/opencann/zoo/resnet50.onnx"))
    ap.add_argument("--work", default=os.path.expanduser("~/.cache/opencann/bench_int8"))
    ap.add_argument("--calib", type=int, default=16)
    ap.add_argument("--images", type=int, default=32)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--method", default="minmax")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    w = args.work
    onnx_b = bb.batched_copy(args.model, w)
    cal1 = os.path.join(w, "calib_b1.npy")
    np.save(cal1, bb.smooth_images(args.calib, 224, seed=7))
    extra = ["--precision_mode=int8", f"--calibration_method={args.method}"]
    om_f1, _ = atc(args.build, onnx_b, os.path.join(w, "r50_fp32_b1"), "1,3,224,224")
    om_q1, out = atc(args.build, onnx_b, os.path.join(w, "r50_int8_b1"), "1,3,224,224",
                     extra + [f"--calibration_data=input:{cal1}"])
    print("\n".join(l for l in out.splitlines() if l.startswith(("Precision", "Accuracy", "  output"))))
    # Latency at batch 1.
    x1 = bb.smooth_images(1, 224, seed=99)
    b1 = os.path.join(w, "in_b1.bin")
    x1.tofile(b1)
    oms = {"fp32": om_f1, "int8": om_q1}
    res = {m: [] for m in oms}
    cpu = {m: [] for m in oms}
    per = max(1, -(-args.runs // args.rounds))
    for _ in range(args.rounds):
        for m, om in oms.items():
            cmd = [os.path.join(args.build, "model_bench"), om, "--warmup", "2", "--runs", str(per), "--input", b1]
            r, _ = mb.run_measured(cmd, dict(os.environ, OPENCANN_NUM_THREADS=str(args.threads)))
            res[m] += r["run_ms"]
            cpu[m] += r.get("run_cpu_ms", [])
    for m in oms:
        c = f", process CPU median {np.median(cpu[m]):.1f} ms" if cpu[m] else ""
        print(f"{m}: median {np.median(res[m]):.1f} ms, best {min(res[m]):.1f} ms{c} ({len(res[m])} runs, "
              f"{args.threads} thread)")
    print(f"speedup (medians) {np.median(res['fp32']) / np.median(res['int8']):.2f}x, load {os.getloadavg()[0]:.1f}")
    # Agreement at batch --batch over images the calibration did not see.
    calb = os.path.join(w, "calib_bb.npy")
    np.save(calb, bb.smooth_images(args.calib, 224, seed=7)[: (args.calib // args.batch) * args.batch])
    shape = f"{args.batch},3,224,224"
    om_fb, _ = atc(args.build, onnx_b, os.path.join(w, "r50_fp32_bb"), shape)
    om_qb, _ = atc(args.build, onnx_b, os.path.join(w, "r50_int8_bb"), shape, extra + [f"--calibration_data=input:{calb}"])
    x = bb.smooth_images(args.images, 224, seed=2026)
    logits = {"fp32": [], "int8": []}
    for s in range(0, args.images - args.batch + 1, args.batch):
        for m, om in (("fp32", om_fb), ("int8", om_qb)):
            logits[m].append(bb.msame_outputs(args.build, om, [x[s:s + args.batch]], w, f"agree_{m}"))
    a, b = (np.concatenate(logits[m]).reshape(-1, logits[m][0].shape[-1]) for m in ("fp32", "int8"))
    n = a.shape[0]
    top1 = float(np.mean(a.argmax(1) == b.argmax(1)))
    top5 = float(np.mean([a[i].argmax() in np.argsort(b[i])[-5:] for i in range(n)]))
    rel = float(np.max(np.abs(a - b).max(1) / (a.max(1) - a.min(1))))
    mu = a.mean(0, keepdims=True)
    top1c = float(np.mean((a - mu).argmax(1) == (b - mu).argmax(1)))
    print(f"agreement over {n} images: top-1 {top1:.3f}, fp32 top-1 in int8 top-5 {top5:.3f}, centred top-1 "
          f"{top1c:.3f}, max |logit diff| / logit range {rel:.4f}, distinct fp32 classes "
          f"{len(set(a.argmax(1).tolist()))}")


if __name__ == "__main__":
    main()
