"""`jit`, `grad` and `vmap` never compile a value of a subclass as its base type (issue 28,
item 2): a masked array, a matrix, a subclass of the user's (of ndarray, a NumPy scalar type
or float) as an argument, a pytree leaf, a value read from outside or made inside raises
TypeError (or UnsupportedError at the line) naming it. jaxlib's C++ dispatcher types such an
argument as its base, so a call with one never takes a FastPath made for plain arrays."""
import numpy as np
import pytest
from psc_jit.core import SubclassArgument, UnsupportedError, grad, jit, vmap
from psc_jit.core.compile import xla
from psc_jit.core.compile.dispatch import subclass_router
from psc_jit.core.compile.jit import Jitted
from psc_jit.core.numpy.subclasses import plain_base

pytestmark = pytest.mark.xla


class Tagged(np.ndarray):
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", None)


class F64(np.float64):
    pass


class Money(float):
    pass


def masked():
    return np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])


SUBCLASS_VALUES = {
    "masked array": masked,
    "matrix": lambda: np.asmatrix(np.ones((1, 3))),
    "recarray": lambda: np.ones(3).view(np.recarray),
    "ndarray subclass": lambda: np.ones(3).view(Tagged),
    "memmap-like masked constant": lambda: np.ma.masked,
}


def doubled(x):
    return x * 2.0


@pytest.mark.parametrize("make", SUBCLASS_VALUES.values(), ids=SUBCLASS_VALUES.keys())
def test_jit_refuses_a_subclass_argument_also_after_plain_calls_made_a_fastpath(make):
    f = jit(doubled)
    plain = np.arange(3.0)
    for _ in range(3):                               # the dispatcher now has a FastPath
        np.testing.assert_array_equal(f(plain), plain * 2.0)
    with pytest.raises(TypeError, match="x is a .*subclass of ndarray"):
        f(make())
    np.testing.assert_array_equal(f(plain), plain * 2.0)


@pytest.mark.parametrize("value, base", [(F64(2.0), "np.float64"), (Money(2.0), "float")])
def test_jit_refuses_a_scalar_subclass_argument(value, base):
    f = jit(lambda x, k: x * k)
    x = np.arange(3.0)
    for _ in range(3):
        f(x, float(value)) if base == "float" else f(x, np.float64(value))
    with pytest.raises(TypeError, match=f"k is a .*, a subclass of {base}"):
        f(x, value)


def test_a_pytree_leaf_of_a_subclass_is_named_by_its_path():
    f = jit(lambda p: p["w"].sum())
    assert f({"w": np.arange(3.0)}) == 3.0
    with pytest.raises(SubclassArgument, match=r"p\['w'\] is a np.ma.MaskedArray"):
        f({"w": masked()})


def test_a_subclass_is_refused_as_a_static_argument():
    f = jit(lambda x: x.sum(), static_argnames="x")
    with pytest.raises(SubclassArgument, match="x is a np.ma.MaskedArray"):
        f(masked())


def test_grad_and_vmap_refuse_a_subclass_argument():
    with pytest.raises(TypeError, match="np.ma.MaskedArray"):
        grad(lambda a: (a * a).sum())(masked())
    with pytest.raises(TypeError, match="np.ma.MaskedArray"):
        vmap(lambda a: a * 2.0)(masked())


W = masked()


def reads_a_masked_global(x):
    return (x * W).sum()


def makes_a_masked_array(x):
    return np.ma.masked_invalid(x).sum()


def views_as_a_subclass(x):
    return np.asarray([1.0, 2.0, 3.0]).view(Tagged) + x


def adds_a_masked_constant(x):
    return x + np.ma.masked


@pytest.mark.parametrize("fn, names", [
    (reads_a_masked_global, "W \\(read by reads_a_masked_global\\)"),
    (makes_a_masked_array, "np.ma.masked_invalid"),
    (views_as_a_subclass, "view\\(Tagged\\)"),
    (adds_a_masked_constant, "np.ma.MaskedConstant")])
def test_a_subclass_read_or_made_inside_is_refused_at_its_line(fn, names):
    with pytest.raises(UnsupportedError, match=names) as info:
        jit(fn)(np.arange(3.0))
    assert info.value.source is not None and "subclass of" in str(info.value)


def test_the_router_without_the_c_module_sends_subclasses_to_the_python_path():
    """What hostmemory.router does in C, done in Python where the C module was not built:
    a real dispatcher in front of which a masked array reaches the Python path."""
    dispatch = xla.dispatcher("subclass_router_test", Jitted._python_call, Jitted._cache_miss)
    route = subclass_router(dispatch, Jitted._python_call)
    f = jit(doubled)
    plain = np.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(route(f, plain), plain * 2.0)
    with pytest.raises(TypeError, match="np.ma.MaskedArray"):
        route(f, masked())
    with pytest.raises(TypeError, match="np.ma.MaskedArray"):
        route(f, x=masked())


@pytest.mark.parametrize("value, base", [
    (np.ones(2), None), (np.float64(1.0), None), (1.0, None), (1j, None), (True, None),
    (np.bool_(True), None), (masked(), np.ndarray), (np.ones(2).view(Tagged), np.ndarray),
    (F64(1.0), np.float64), (Money(1.0), float), (np.int64(3), None), ("s", None)])
def test_plain_base_names_the_base_of_a_strict_subclass_only(value, base):
    assert plain_base(value) is base
