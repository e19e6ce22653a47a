"""The one table of primitives: every primitive has every rule, under a usable name."""
from __future__ import annotations

import keyword

import numpy as np
import pytest
from psc_jit.core import primitives
from psc_jit.core.primitives import PRIMITIVES, Primitive, ufunc_primitives
from psc_jit.core.primitives.record import register

pytestmark = pytest.mark.pure

RULES = ("shape_rule", "dtype_rule", "impl", "lowering")


def all_primitives() -> list[Primitive]:
    return [PRIMITIVES[name] for name in sorted(PRIMITIVES)]


def test_the_table_is_not_empty():
    assert len(PRIMITIVES) > 50


@pytest.mark.parametrize("prim", all_primitives(), ids=lambda p: p.name)
def test_every_primitive_has_every_rule(prim):
    for rule in RULES:
        assert callable(getattr(prim, rule)), f"{prim.name} has no {rule}"
    assert prim.weak_type_rule is None or callable(prim.weak_type_rule)


@pytest.mark.parametrize("prim", all_primitives(), ids=lambda p: p.name)
def test_every_name_is_an_identifier_and_its_key(prim):
    # Names appear in op locations ("e3:add"), printed graphs and docs: plain identifiers.
    assert prim.name.isidentifier() and not keyword.iskeyword(prim.name)
    assert prim.name == prim.name.lower()
    assert PRIMITIVES[prim.name] is prim
    assert getattr(primitives, f"{prim.name}_p") is prim    # exported as a value
    assert repr(prim) == f"Primitive({prim.name})"
    assert isinstance(prim.doc, str)


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        register(PRIMITIVES["add"])


def test_the_package_exports_exactly_the_registered_primitives():
    exported = {getattr(primitives, n) for n in primitives.__all__ if n.endswith("_p")}
    assert exported == set(PRIMITIVES.values())


def test_each_ufunc_is_one_primitive_named_in_its_record():
    table = ufunc_primitives()
    assert table[np.exp] is primitives.exp_p
    assert table[np.absolute] is table[np.fabs] is primitives.abs_p
    assert table[np.fmod] is primitives.fmod_p
    for ufunc, prim in table.items():
        assert isinstance(ufunc, np.ufunc) and ufunc in prim.ufuncs
