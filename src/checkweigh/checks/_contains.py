"""The ``contains`` check: expected values in a text, a list, or across many texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import model_validator

from ..core import MISSING, Case, Verdict, failed, passed
from ._model import Compiled, FieldCheck, Getter, Runner, TextOptions, ValuesOptions, short
from ._text import as_text, normalized


class Contains(Compiled, FieldCheck, ValuesOptions, TextOptions):
    """The text (or list) at ``path`` contains ``any`` / ``all`` / ``none`` of the values.

    The values are written in the suite (``values``) or read from the case (``values_path``);
    a number is looked for as it is usually written (``1234``, ``30`` for ``30.0``). On a path
    with many values (``trace[kind=assistant].content``), ``within`` says how they are searched:

    - ``within: each`` (the default): each text is judged on its own and ``match`` combines
      them: ``mode: all, match: any`` passes when *one* reply holds every value;
    - ``within: any``: the texts are searched together: ``mode: all`` passes when every value
      is in *some* reply (each may be in a different one), ``mode: none`` when no reply holds
      any of them.
    """

    type: Literal["contains"] = "contains"
    mode: Literal["any", "all", "none"] = "any"
    """Pass when any, all or none of the values occur."""
    within: Literal["each", "any"] = "each"
    """For a path with many values: judge each text on its own (``each``, combined by
    ``match``), or look for each value in any of the texts (``any``)."""

    @model_validator(mode="after")
    def _within_needs_many_values(self) -> Self:
        if self.within == "any":
            if not self.field_path().many:
                raise ValueError(
                    f"'within: any' searches the values of a path with [*] or a filter, "
                    f"such as 'trace[kind=assistant].content'; {self.path!r} has one value"
                )
            if "match" in self.model_fields_set:
                raise ValueError("'match' does not apply with 'within: any' (texts are pooled)")
        return self

    def compile(self) -> Runner:
        if self.within == "any":
            return self._pooled()
        return self.over(self._build, self.values_getter())

    def _needles(self, values: list[Any], norm: Callable[[str], str] | None) -> list[Any]:
        texts = [as_text(v) for v in values]
        return [normalized(t, norm) for t in texts]

    def _fixed_needles(self, norm: Callable[[str], str] | None) -> list[Any] | None:
        """The texts to look for when they are written in the suite (made once)."""
        return None if self.values is None else self._needles(self.values, norm)

    def _build(self, get: Getter, values_of: Getter) -> Runner:
        path, mode, norm = self.path, self.mode, self.text_normalizer()
        no_values = self.no_values()
        fixed = self._fixed_needles(norm)

        def run(case: Any) -> Verdict:
            actual = get(case)
            if actual is MISSING:
                return failed(f"{path} is missing")
            values = values_of(case)
            if values is MISSING:
                return no_values
            if isinstance(actual, str):
                hay: Any = normalized(actual, norm)
                needles = fixed if fixed is not None else self._needles(values, norm)
                found = [v for v, n in zip(values, needles, strict=True) if n in hay]
            elif isinstance(actual, list):
                hay = [normalized(x, norm) for x in actual]
                found = [v for v in values if normalized(v, norm) in hay]
            else:
                return failed(f"{path} is {type(actual).__name__}, expected text or a list")
            return _decide(mode, path, values, found)

        return run

    def _pooled(self) -> Runner:
        path, mode = self.field_path(), self.mode
        norm, values_of = self.text_normalizer(), self.values_getter()
        nothing = failed(f"{path} matched nothing")
        no_text = failed(f"{path} has no text")
        no_values = self.no_values()
        fixed = self._fixed_needles(norm)

        def run(case: Case) -> Verdict:
            located = path.locate(case)
            if not located:
                return nothing
            values = values_of(case)
            if values is MISSING:
                return no_values
            if norm is None:
                texts = [(w, t) for w, t in located if isinstance(t, str)]
            else:
                texts = [(w, norm(t)) for w, t in located if isinstance(t, str)]
            if not texts:
                return no_text
            where: dict[int, str] = {}
            needles = fixed if fixed is not None else self._needles(values, norm)
            for i, needle in enumerate(needles):
                if needle is not None:
                    for w, t in texts:
                        if needle in t:
                            where[i] = w
                            break
            searched = f"{len(texts)} text{'s' if len(texts) != 1 else ''} at {path}"
            missing = [v for i, v in enumerate(values) if i not in where]
            if mode == "all":
                if missing:
                    return failed(f"{short(missing)} not in any of {searched}")
                return passed(f"all {len(values)} values found in {searched}")
            if mode == "any" and not where:
                return failed(f"none of {short(values)} in {searched}")
            if mode == "none" and not where:
                return passed(f"none of {short(values)} in {searched}")
            i, spot = next(iter(where.items()))
            return (passed if mode == "any" else failed)(f"{spot} contains {short(values[i])}")

        return run


def _decide(mode: str, path: str, values: list[Any], found: list[Any]) -> Verdict:
    """The verdict of one text (or list) from the values found in it."""
    if mode == "any":
        ok = bool(found)
    elif mode == "all":
        ok = len(found) == len(values)
    else:
        ok = not found
    if ok:
        return passed(f"{path} contains {short(found)}" if found else "none found")
    if mode == "none":
        return failed(f"{path} contains {short(found)}")
    return failed(f"{path} lacks {short([v for v in values if v not in found])}")
