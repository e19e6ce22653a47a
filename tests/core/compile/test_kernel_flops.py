"""Each kernel's floating-point operations, from XLA's cost analysis of the kernel alone (and
psc_jit's own custom calls by their shapes), against counts made by hand; and the edges of the
after-fusion graph, from the optimized module's operands."""
from __future__ import annotations

import numpy as np
import pytest

from psc_jit import jit
from psc_jit.core.compile.kernel_cost import custom_call_flops, kernel_module_text

pytestmark = pytest.mark.xla


def compiled(fn, *args):
    return jit(fn).trace(*args).lower().compile()


def only_kernel(program, kind=None):
    kernels = [k for k in program.kernels.all_kernels() if kind is None or k.kind == kind]
    assert len(kernels) == 1, [(k.name, k.kind) for k in program.kernels.all_kernels()]
    return kernels[0]


def test_a_512_matrix_product_is_268_million_flops():
    """The issue's case: BLAS runs it (a custom call XLA counts as nothing); it is
    2 * 512**3 operations, each multiply-add two."""
    a, b = np.ones((512, 512)), np.ones((512, 512))
    program = compiled(lambda a, b: a @ b, a, b)
    assert program.cost_analysis()["flops"] == 2 * 512 ** 3 == 268_435_456
    assert program.kernels.flops == 2 * 512 ** 3


def test_a_small_product_is_counted_by_xla():
    a = np.ones((8, 8), np.float32)
    program = compiled(lambda a, b: a @ b, a, a)
    assert "dot" in only_kernel(program).fused_ops
    assert program.cost_analysis()["flops"] == 2 * 8 * 8 * 8


def test_a_batched_product_counts_every_batch():
    a, b = np.ones((4, 64, 32)), np.ones((4, 32, 48))
    assert compiled(lambda a, b: a @ b, a, b).kernels.flops == 2 * 4 * 64 * 32 * 48


def test_a_long_convolution_is_a_multiply_add_per_tap_and_output():
    x, k = np.ones(1000), np.ones(64)
    program = compiled(lambda x, k: np.convolve(x, k, mode="valid"), x, k)
    assert any("convolution" in kernel.fused_ops for kernel in program.kernels.all_kernels())
    outputs = 1000 - 64 + 1
    assert program.kernels.flops == 2 * outputs * 64


def test_a_short_convolution_is_its_shifted_products_and_sums():
    x, k = np.ones(1000), np.ones(7)
    program = compiled(lambda x, k: np.convolve(x, k, mode="valid"), x, k)
    outputs = 1000 - 7 + 1
    assert program.kernels.flops == outputs * (7 + 6)     # 7 products, 6 additions


def test_a_row_sum_of_squares_counts_products_and_additions():
    y = np.ones((300, 200))
    program = compiled(lambda y: (y ** 2).sum(axis=1), y)
    squares, additions = 300 * 200, 300 * 199
    signed_zero = 2 * 300         # a compare and a select per row: a sum of -0.0s is -0.0
    assert program.kernels.flops == squares + additions + signed_zero


def test_elementwise_kernels_count_each_op_per_element_and_transcendentals_apart():
    x = np.ones(1000)
    program = compiled(lambda x, y, z: x * y + z, x, x, x)
    assert program.kernels.flops == 2 * 1000
    program = compiled(lambda x: np.sin(x), x)
    assert program.kernels.flops == 0 and only_kernel(program).transcendentals == 1000
    assert program.cost_analysis()["transcendentals"] == 1000


def test_a_loop_counts_its_body_as_many_times_as_it_runs():
    def ten_doublings(x):
        for _ in range(10):
            x = x * 2.0
        return x
    program = compiled(ten_doublings, np.ones(1000))
    loop = only_kernel(program, "while")
    assert loop.trip_count == 10
    assert 10 * 1000 <= loop.flops <= 10 * 1000 + 10 * 4    # the counter's add and compare


def test_psc_jits_custom_calls_are_counted_from_their_shapes():
    assert custom_call_flops("psc_gemm_nn", ("f64[2,3,4]", "f64[2,4,5]"), "f64[2,3,5]") == \
        2 * 2 * 3 * 4 * 5
    assert custom_call_flops("psc_gemm_tn", ("f64[4,3]", "f64[4,5]"), "f64[3,5]") == 2 * 3 * 4 * 5
    assert custom_call_flops("psc_gemv_n", ("f64[100,50]", "f64[50]"), "f64[100]") == 2 * 5000
    assert custom_call_flops("psc_argmax", ("f64[10,20]",), "s64[10]") == 200
    assert custom_call_flops("lapack_dpotrf_ffi", ("f64[4,4]",), "f64[4,4]") is None


def test_a_kernel_alone_is_a_module_xla_reads():
    from psc_jit.core.compile import xla
    text = kernel_module_text(
        "product", "dot", "f32[3,5]", ("f32[3,4]", "f32[4,5]"),
        (("lhs_contracting_dims", "{1}"), ("rhs_contracting_dims", "{0}"),
         ("metadata", '{op_name="e0:dot"}')), ())
    assert "metadata" not in text
    assert xla.module_cost(text)["flops"] == 2 * 3 * 4 * 5


# ------------------------------------------------------- the edges of the after-fusion graph

def test_a_reduction_split_over_kernels_is_a_chain_from_the_input_to_the_output():
    """The issue's case: `(y ** 2).sum(axis=1)` is two kernels or more, one feeding the
    next, not siblings each fed by the input."""
    program = compiled(lambda y: (y ** 2).sum(axis=1), np.ones((300, 200)))
    kernels = program.kernels.kernels
    assert len(kernels) >= 2
    assert kernels[0].inputs == ("parameter 0",)
    for before, after in zip(kernels, kernels[1:], strict=False):
        assert after.inputs == (before.name,)
    assert program.kernels.outputs == ((kernels[-1].name,),)


def test_each_output_names_the_kernel_that_makes_it_and_inputs_their_parameters():
    def two(a, b):
        return a @ b, np.tanh(a) + 1.0
    program = compiled(two, np.ones((64, 64)), np.ones((64, 64)))
    model = program.kernels
    names = {k.name for k in model.kernels}
    assert len(model.outputs) == 2 and all(set(o) <= names for o in model.outputs)
    product = next(k for k in model.kernels if k.name in model.outputs[0])
    assert set(product.inputs) == {"parameter 0", "parameter 1"}
    tanh = next(k for k in model.kernels if k.name in model.outputs[1])
    assert tanh.inputs == ("parameter 0",)


@pytest.mark.ipython
def test_the_magic_and_psc_timings_rate_a_matrix_product_by_its_real_flops():
    from IPython.core.interactiveshell import InteractiveShell

    import psc_jit
    from psc_jit.widgets.timing import timings_overview_html
    from psc_jit.widgets.units import fmt_count
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(a=np.ones((512, 512)), b=np.ones((512, 512)))
    shell.run_cell_magic("psc_jit", "--quiet --compare --name matmul-flops", "c = a @ b\n")
    timings = psc_jit.last_report().timings
    assert timings.flops == 2 * 512 ** 3
    rate = fmt_count(2 * 512 ** 3 / timings.compiled_median, "FLOP/s")
    assert f"<td>{rate}</td>" in timings_overview_html([psc_jit.last_report()])
    for name in ("a", "b", "c"):
        shell.user_ns.pop(name, None)
