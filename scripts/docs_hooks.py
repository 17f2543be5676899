"""scripts/docs_hooks.py — MkDocs hooks (mkdocs.yml `hooks:`) that make the pages the site
derives from other files, so each fact keeps one owner:

- `index.md` is README.md, its `docs/...` links made relative to docs/;
- `reference/cpp/<name>.md` is one page per public header in include/pto/ (every `*.h` and
  `*.def`, found at build time, so a new header cannot be missed): the header's leading
  comment as text, then the header itself; `reference/cpp/index.md` lists them, and the nav
  entry "C++ headers" becomes a section with every page.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parent.parent
HEADERS = REPO / "include" / "pto"
CPP_INDEX = "reference/cpp/index.md"


def public_headers() -> list[Path]:
    """Every public header, sorted by name: what the reference must list."""
    return sorted(p for p in HEADERS.iterdir() if p.suffix in (".h", ".def") and p.is_file())


def page_uri(header: Path) -> str:
    return f"reference/cpp/{header.name.replace('.', '_')}.md"


def split_leading_comment(text: str) -> tuple[list[str], str]:
    """The header's leading comment (a block of `//` lines or one `/* ... */`), as lines without
    the comment marks, and everything after it."""
    lines = text.splitlines()
    comment: list[str] = []
    i = 0
    if lines and lines[0].startswith("//"):
        while i < len(lines) and lines[i].startswith("//"):
            comment.append(re.sub(r"^// ?", "", lines[i]))
            i += 1
    elif lines and lines[0].startswith("/*"):
        while i < len(lines):
            line, i = lines[i], i + 1
            closed = "*/" in line
            line = re.sub(r"\s*\*/.*$", "", line) if closed else line
            comment.append(re.sub(r"^(/\*| \*) ?", "", line))
            if closed:
                break
    return comment, "\n".join(lines[i:]).strip("\n")


def escape_markdown(line: str) -> str:
    """Comment text shown as text: no HTML, and no Markdown emphasis, links or code marks."""
    return re.sub(r"([\\`*_\[\]#|])", r"\\\1", html.escape(line, quote=False))


def without_path(first_line: str) -> str:
    """A comment's first line names the file ("include/pto/x.h — what it is"): keep the what."""
    return re.sub(r"^include/pto/\S+\s*(—|-)?\s*", "", first_line)


def comment_markdown(comment: list[str]) -> str:
    """Prose paragraphs as text; lines indented by two spaces or more (examples) as code."""
    out: list[str] = []
    prose: list[str] = []
    code: list[str] = []

    def flush() -> None:
        if prose:
            out.append(" ".join(escape_markdown(s.strip()) for s in prose))
            prose.clear()
        if code:
            out.append("```cpp\n" + "\n".join(code) + "\n```")
            code.clear()

    for line in comment:
        if not line.strip():
            flush()
        elif line.startswith("  "):
            if prose:
                flush()
            code.append(line[2:])
        else:
            if code:
                flush()
            prose.append(line)
    flush()
    return "\n\n".join(out)


def header_page(header: Path) -> str:
    comment, body = split_leading_comment(header.read_text(encoding="utf-8"))
    if comment:
        comment[0] = without_path(comment[0])
    prose = comment_markdown(comment) or "(no leading comment)"
    fence = "````" if "```" in body else "```"
    return (
        f"# `pto/{header.name}`\n\n{prose}\n\n"
        f'Included as `#include "pto/{header.name}"`; source: `include/pto/{header.name}`.\n\n'
        f"{fence}cpp\n{body}\n{fence}\n"
    )


def summary(header: Path) -> str:
    """The first sentence of the header's description."""
    comment, _ = split_leading_comment(header.read_text(encoding="utf-8"))
    if not comment:
        return ""
    first: list[str] = []
    for line in [without_path(comment[0])] + comment[1:]:
        if not line.strip():
            break
        first.append(line.strip())
    sentence = re.split(r"(?<=[.:])\s", " ".join(first), maxsplit=1)[0]
    return escape_markdown(sentence.rstrip(".:"))


def index_page(headers: list[Path]) -> str:
    rows = []
    for h in headers:
        rows.append(f"| [`pto/{h.name}`]({Path(page_uri(h)).name}) | {summary(h)} |")
    return (
        "# C++ headers\n\n"
        "Every public header of `include/pto/`, the API of the C++ library and of the code "
        "compiled against it (kernels, orchestrations). Each page shows the header's own "
        "description and then the header as it is. How to build against them: "
        "[Use it from C++](../../guide/cpp.md).\n\n"
        "| header | what it is |\n|---|---|\n" + "\n".join(rows) + "\n"
    )


def readme_as_index() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    # README's links point into docs/ from the repository root; the site's root is docs/.
    return re.sub(r"\]\(docs/", "](", text)


def on_config(config: Any) -> Any:
    """Turn the nav entry "C++ headers" into a section listing every header's page."""
    section = [{"Overview": CPP_INDEX}] + [{f"pto/{h.name}": page_uri(h)} for h in public_headers()]

    def expand(items: list[Any]) -> bool:
        for i, item in enumerate(items):
            if isinstance(item, dict):
                ((title, value),) = item.items()
                if value == CPP_INDEX:
                    items[i] = {title: section}
                    return True
                if isinstance(value, list) and expand(value):
                    return True
        return False

    if not expand(config["nav"]):
        raise ValueError(f"mkdocs.yml's nav has no entry for {CPP_INDEX}")
    return config


def on_files(files: Files, config: Any) -> Files:
    headers = public_headers()
    files.append(File.generated(config, "index.md", content=readme_as_index()))
    files.append(File.generated(config, CPP_INDEX, content=index_page(headers)))
    for h in headers:
        files.append(File.generated(config, page_uri(h), content=header_page(h)))
    return files


def public_python_names() -> list[str]:
    """`module.name` for every name in the `__all__` of the modules the Python reference shows."""
    import importlib

    names = []
    for module in ("pto_runtime", "pto_runtime.l4", "pto_runtime.trace"):
        mod = importlib.import_module(module)
        names += [f"{module}.{n}" for n in mod.__all__]
    return names


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """The Python reference must document every public name: fail the build on one it misses."""
    if page.file.src_uri == "reference/python.md":
        missing = [n for n in public_python_names() if f'id="{n}"' not in html]
        if missing:
            raise PluginError(f"reference/python.md does not document: {', '.join(missing)}")
    return html
