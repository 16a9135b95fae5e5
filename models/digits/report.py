#!/usr/bin/env python3
"""Prints the demo's predictions and accuracy from msame's output file.

usage: report.py OUTPUT_NPY LABELS_NPY
"""
import sys

import numpy as np


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    probs = np.load(sys.argv[1])
    labels = np.load(sys.argv[2])
    if probs.shape != (len(labels), 10):
        sys.exit(f"unexpected output shape {probs.shape}, expected ({len(labels)}, 10)")
    pred = probs.argmax(axis=1)
    print("predictions:", " ".join(str(p) for p in pred))
    print("labels:     ", " ".join(str(l) for l in labels))
    wrong = np.nonzero(pred != labels)[0]
    print(f"accuracy on the {len(labels)} bundled samples: {np.mean(pred == labels) * 100:.2f}%"
          + (f" (misclassified indices: {wrong.tolist()})" if len(wrong) else ""))


if __name__ == "__main__":
    main()
