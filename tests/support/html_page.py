"""A page's HTML as a small tree (the standard library's parser), to find elements by id,
class and attribute the way a browser test does, and to prove what is not there: no inline
script, no event handler, no element an attacker's text could have made."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

_VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


@dataclass
class Node:
    """An element: its tag, attributes, children and text."""

    tag: str
    attrs: dict[str, str | None]
    content: list[Node | str] = field(default_factory=list)
    """Its text and child elements, in document order."""

    @property
    def children(self) -> list[Node]:
        """Its child elements."""
        return [c for c in self.content if isinstance(c, Node)]

    @property
    def text(self) -> str:
        """All text inside, whitespace collapsed."""
        return " ".join("".join(self._texts()).split())

    def _texts(self) -> Iterator[str]:
        for piece in self.content:
            if isinstance(piece, str):
                yield piece
            else:
                yield from piece._texts()

    def get(self, name: str) -> str | None:
        """An attribute's value (unescaped, as a browser reads it)."""
        return self.attrs.get(name)

    @property
    def classes(self) -> set[str]:
        """Its class names."""
        return set((self.attrs.get("class") or "").split())

    def iter(self) -> Iterator[Node]:
        """This element and every element inside it, in document order."""
        yield self
        for child in self.children:
            yield from child.iter()

    def all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        """The elements inside matching ``tag``, class ``cls`` and attribute values (an
        attribute named with ``_`` for ``-``)."""
        found = []
        for node in self.iter():
            if node is self:
                continue
            if tag is not None and node.tag != tag:
                continue
            if cls is not None and cls not in node.classes:
                continue
            if any(node.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            found.append(node)
        return found

    def one(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        """The single element matching (an AssertionError when not exactly one)."""
        found = self.all(tag, cls, **attrs)
        assert len(found) == 1, f"expected one {tag} .{cls} {attrs}, found {len(found)}"
        return found[0]

    def by_id(self, id_: str) -> Node:
        """The element with this id."""
        return self.one(id=id_)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].content.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].content.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].content.append(data)


def parse(html: str) -> Node:
    """The document's tree."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def assert_inert(page: Node) -> None:
    """The page runs only this server's script files: no inline script, no ``on*`` handler,
    no ``style`` attribute, no ``javascript:`` link, and no ``img``, ``iframe`` or ``object``
    (the pages have none: one would be an attacker's)."""
    for node in page.iter():
        assert node.tag not in ("img", "iframe", "object", "embed"), node
        if node.tag == "script":
            assert (node.get("src") or "").startswith("/static/"), node
            assert not node.text, node
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (name, value)
            assert name != "style", (name, value)
            if name in ("href", "src", "action"):
                assert not (value or "").strip().lower().startswith("javascript:"), value
