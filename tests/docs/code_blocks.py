"""The Python blocks of the README and the documentation pages, as the tests run them.

A block is a fenced code block whose info string starts with ``python``. A block that is not
meant to run carries, on the line just before its fence, an HTML comment with a reason:
``<!-- skip: needs dynamax, which CI does not install -->``; nothing else skips a block.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

__all__ = ["Block", "python_blocks", "run_blocks", "ROOT", "PAGES"]

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
SKIP = re.compile(r"^<!--\s*skip:\s*(?P<reason>\S.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced Python block: its source, the 1-based line of its fence, and why it is
    skipped (``None`` when it runs)."""

    source: str
    line: int
    skip: str | None


def python_blocks(text: str) -> list[Block]:
    """The Python blocks of a markdown text, in order (commonmark, as MkDocs and GitHub read
    fences). A skip comment must stand alone on the line before the fence and give a reason."""
    tokens = MarkdownIt("commonmark").parse(text)
    blocks, previous = [], None
    for token in tokens:
        if token.type == "fence" and token.info.split()[:1] == ["python"]:
            reason = None
            if previous is not None and previous.type == "html_block" and previous.map[1] == token.map[0]:
                match = SKIP.match(previous.content.strip())
                reason = match.group("reason") if match else None
            blocks.append(Block(token.content, token.map[0] + 1, reason))
        if token.type in ("fence", "html_block", "paragraph_open", "heading_open", "bullet_list_open",
                          "ordered_list_open", "table_open", "blockquote_open", "hr", "code_block"):
            previous = token
    return blocks


def run_blocks(blocks: list[Block], name: str) -> int:
    """Run the blocks that are not skipped, in order, in one namespace (what a reader pasting
    them one after the other gets); returns how many ran. An exception propagates, its
    traceback naming ``name:line``."""
    namespace: dict = {"__name__": "__main__"}
    ran = 0
    for block in blocks:
        if block.skip is not None:
            continue
        # pad with blank lines so that tracebacks give the line number in the page
        code = "\n" * block.line + block.source
        exec(compile(ast.parse(code, filename=name), name, "exec"), namespace)
        ran += 1
    return ran
