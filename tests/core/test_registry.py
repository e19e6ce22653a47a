"""The one table of primitives: every primitive has every rule, under a usable name."""
from __future__ import annotations

import keyword

import pytest

from psc_jit.core.registry import PRIMITIVES, Primitive, load_all, primitive, register

pytestmark = pytest.mark.pure

RULES = ("shape_rule", "dtype_rule", "impl", "lowering")


def all_primitives() -> list[Primitive]:
    return [PRIMITIVES[name] for name in sorted(load_all())]


def test_the_table_is_not_empty():
    assert len(load_all()) > 50


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
    assert primitive(prim.name) is prim
    assert repr(prim) == f"Primitive({prim.name})"
    assert isinstance(prim.doc, str)


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        register(PRIMITIVES["add"])
