"""A pydantic model's fields as a docstring section, so ``help()`` shows what each one means.

pydantic keeps each ``Field(description=...)`` in ``model_fields``, which ``help()`` does not
print; this renders them under the class docstring once, at import.
"""

from __future__ import annotations

import inspect

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def fields_section(model: type[BaseModel]) -> str:
    """``Fields:`` then one entry per field of ``model`` in declaration order:
    ``name (default: repr)`` (or ``name (required)``) and, indented below, its description
    (fields without a description are listed by name alone)."""
    lines = ["", "", "Fields:"]
    for name, info in model.model_fields.items():
        if info.is_required():
            head = f"    {name} (required)"
        elif info.default is PydanticUndefined:
            head = f"    {name}"
        else:
            head = f"    {name} (default: {info.default!r})"
        lines.append(head)
        if info.description:
            lines.append(f"        {info.description}")
    return "\n".join(lines)


def document_fields(model: type[BaseModel]) -> None:
    """Append ``fields_section(model)`` to ``model.__doc__`` (once), the docstring's own
    indentation removed first so that both read at one level."""
    doc = inspect.cleandoc(model.__doc__ or "")
    if "\nFields:\n" not in doc:
        model.__doc__ = doc + fields_section(model)
