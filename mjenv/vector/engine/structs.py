"""The shared base of the engines' states: a numba StructRef of named arrays.

A game defines its state as ``@structref.register class StateType(ArraysType)``, a
``StructRefProxy`` subclass and ``structref.define_proxy``; compiled functions then receive one
pointer per call instead of a tuple of arrays whose reference counts every call would touch.
"""

from __future__ import annotations

from numba import types


class ArraysType(types.StructRef):
    """A StructRef whose fields are arrays (or scalars), typed without literal values."""

    def preprocess_fields(self, fields: tuple) -> tuple:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)
