"""XLA's own loops, compiled with psc_jit's options, give the values the program says: an
inner loop reads its outer loop's index as it is in that pass, whether the index is carried
into the inner loop or read from outside it (with jaxlib 0.10.2, XLA:CPU's copy insertion by
region analysis gave the next pass's index there: i + j + 1 for i + j)."""
import numpy as np
import pytest
from psc_jit.core.compile import xla
from psc_jit.core.ir import ShapedArray

pytestmark = pytest.mark.xla

I64 = ShapedArray((), np.dtype("int64"))

NESTED = """
module @m {
  func.func public @main(%arg0: tensor<i64>) -> (tensor<i64>) {
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %r:2 = stablehlo.while(%i = %zero, %acc = %arg0) : tensor<i64>, tensor<i64>
     cond {
      %c3 = stablehlo.constant dense<3> : tensor<i64>
      %p = stablehlo.compare LT, %i, %c3 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i64>
      %s:3 = stablehlo.while(%bi = %i, %j = %z, %a = %acc) : tensor<i64>, tensor<i64>, tensor<i64>
       cond {
        %c3b = stablehlo.constant dense<3> : tensor<i64>
        %q = stablehlo.compare LT, %j, %c3b : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %q : tensor<i1>
      } do {
        %sum = stablehlo.add INDEX, %j : tensor<i64>
        %ten = stablehlo.constant dense<100> : tensor<i64>
        %a10 = stablehlo.multiply %a, %ten : tensor<i64>
        %a2 = stablehlo.add %a10, %sum : tensor<i64>
        %one = stablehlo.constant dense<1> : tensor<i64>
        %j2 = stablehlo.add %j, %one : tensor<i64>
        stablehlo.return %bi, %j2, %a2 : tensor<i64>, tensor<i64>, tensor<i64>
      }
      %one1 = stablehlo.constant dense<1> : tensor<i64>
      %i2 = stablehlo.add %i, %one1 : tensor<i64>
      stablehlo.return %i2, %s#2 : tensor<i64>, tensor<i64>
    }
    return %r#1 : tensor<i64>
  }
}
"""


def _digits_of_nested_loops() -> int:
    acc = 0
    for i in range(3):
        for j in range(3):
            acc = acc * 100 + (i + j)
    return acc


@pytest.mark.parametrize("index", ["%bi", "%i"], ids=["carried in", "read from outside"])
def test_an_inner_loop_reads_the_outer_index_of_its_own_pass(index):
    executable = xla.compile_stablehlo(NESTED.replace("INDEX", index), [I64], [I64])
    (result,) = executable.execute([np.array(0, dtype=np.int64)])
    assert int(result) == _digits_of_nested_loops()


def test_a_rolled_loop_nest_of_a_cell_fills_by_both_indices():
    from psc_jit import jit

    def fill(M):
        for i in range(M.shape[0]):
            for j in range(M.shape[1]):
                M[i, j] = 1.0 / (i + j + 1)
        return M
    want = fill(np.zeros((5, 4)))
    got = jit(fill)(np.zeros((5, 4)))
    np.testing.assert_array_equal(got, want)
