"""Einsum against onnxruntime: the contractions that run as batched GEMMs over
strided views of the operands (float32, two operands: attention scores and
values in several layouts, transposed operands and outputs, merged M/N axes,
broadcast batches, diagonals) and the ones that stay on the general loop
(one-operand sums, tiny products, three operands), at 1 and 2 threads."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

from oc_harness import compile_and_compare

R = np.random.default_rng(23)

# equation, shapes
CASES = {
    "maxvit_scores": ("BGHID,BGHJD->BGHIJ", [(1, 4, 2, 49, 32), (1, 4, 2, 49, 32)]),
    "maxvit_values": ("BGHIJ,BGHJD->BGHID", [(1, 4, 2, 49, 49), (1, 4, 2, 49, 32)]),
    "heads_last_scores": ("bqhd,bkhd->bhqk", [(2, 33, 3, 16), (2, 40, 3, 16)]),
    "heads_last_values": ("bhqk,bkhd->bqhd", [(2, 3, 33, 40), (2, 40, 3, 16)]),
    "plain": ("ij,jk->ik", [(37, 50), (50, 41)]),
    "b_transposed": ("ij,kj->ik", [(37, 50), (41, 50)]),
    "a_transposed": ("ji,jk->ik", [(50, 37), (50, 41)]),
    "output_transposed": ("ij,jk->ki", [(37, 50), (50, 41)]),
    "merged_m": ("bnd,dk->bnk", [(3, 20, 24), (24, 30)]),
    "output_transposed_batch": ("bnd,kd->bkn", [(3, 20, 24), (30, 24)]),
    "ellipsis_broadcast": ("...ij,...jk->...ik", [(3, 1, 24, 20), (1, 2, 20, 26)]),
    "diagonal_of_a": ("bii,bij->bj", [(2, 64, 64), (2, 64, 80)]),
    "outer": ("i,j->ij", [(70,), (90,)]),
    "batch_outer_dims": ("xbij,bjk->xbik", [(2, 3, 17, 19), (3, 19, 23)]),
    # general loop
    "one_operand_sum": ("ij,jk->k", [(5, 6), (6, 7)]),
    "dot_products": ("ij,ij->i", [(40, 16), (40, 16)]),
    "three_operands": ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)]),
}


def model(eq, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=eq)
    g = helper.make_graph([node], "einsum", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                               for n, s in zip(names, shapes)],
                          [helper.make_empty_tensor_value_info("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 8
    return m, {n: R.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_einsum_matches_onnxruntime(case, threads, monkeypatch):
    monkeypatch.setenv("OPENCANN_NUM_THREADS", threads)
    eq, shapes = CASES[case]
    m, feeds = model(eq, shapes)
    compile_and_compare(m, feeds, rtol=1e-4, atol=1e-4)
