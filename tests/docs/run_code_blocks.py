"""tests/docs/run_code_blocks.py — runs every Python, C++ and shell block of README.md and
docs/**/*.md as written, so the documentation cannot drift from the code.

Usage: python tests/docs/run_code_blocks.py [-v] [--keep] [FILE.md ...]
(no files: README.md and every docs/**/*.md). Needs the package installed (scripts/docs.sh
check, or scripts/test_all.sh, does it first). Exit status 1 when a block fails.

What runs how, and the HTML comments that mark a block as a fragment, as skipped (with a
reason), as a kernel or as an orchestration, is described for writers of the docs in
docs/guide/setup.md, "Documentation"; in short: each page's blocks run in order in a scratch
directory of their own that links the repository's top-level folders and holds the page's
files (blocks with title="NAME"); Python runs with this interpreter, shell with bash -euo
pipefail, C++ with main() is compiled against the installed package and run. Any block that
is not marked and does not run fails, as does a block over PTO_DOC_BLOCK_TIMEOUT seconds
(default 300).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_LANGS = {
    "python": "python",
    "py": "python",
    "cpp": "cpp",
    "c++": "cpp",
    "sh": "sh",
    "bash": "sh",
    "shell": "sh",
}
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
MARKER = re.compile(r"^<!--\s*doc:\s*(?P<body>.*?)\s*-->$")
TITLE = re.compile(r'title="(?P<name>[^"]+)"')
# Top-level entries a page's scratch directory does not link: build output, the venv, VCS.
NOT_LINKED = {".git", ".venv", "site", "build", "build-py"}


class DocError(Exception):
    """A block that is not runnable as written, or a marker the runner does not know."""


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str  # the info string's first word, lower case ("" for none)
    title: str | None
    marker: list[str]  # the marker comment's words ([] for none)
    text: str
    outcome: str = field(default="")

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def kind(self) -> str | None:
        return RUN_LANGS.get(self.lang)


def parse_marker(comment: str, where: str) -> list[str]:
    words = shlex.split(comment)
    if not words:
        raise DocError(f"{where}: empty doc marker")
    head = words[0]
    if head == "fragment" and len(words) == 1:
        return words
    if head == "skip" and len(words) == 2 and words[1].strip():
        return words
    if head == "kernel" and len(words) == 2 and words[1] in ("AIV", "AIC", "MIX"):
        return words
    if head == "orchestration" and len(words) == 2:
        return words
    raise DocError(
        f'{where}: doc marker {comment!r} is not one of: fragment, skip "reason", '
        "kernel AIV|AIC|MIX, orchestration RUNTIME"
    )


def parse_blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(
            rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[i]
        ):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise DocError(f"{page.relative_to(REPO)}:{start + 1}: code block is never closed")
        i += 1
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        marker: list[str] = []
        if prev >= 0 and (mm := MARKER.match(lines[prev].strip())):
            marker = parse_marker(mm.group("body"), f"{page.relative_to(REPO)}:{prev + 1}")
        t = TITLE.search(info)
        blocks.append(
            Block(
                page,
                start + 1,
                (info.split() or [""])[0].lower(),
                t.group("name") if t else None,
                marker,
                "\n".join(body) + "\n",
            )
        )
    return blocks


def package_dir() -> Path:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pto_runtime, os; print(os.path.dirname(pto_runtime.__file__))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise DocError(
            "pto_runtime is not installed in this interpreter "
            f"({sys.executable}): {out.stderr.strip().splitlines()[-1:]}"
        )
    return Path(out.stdout.strip())


class PageRun:
    def __init__(self, page: Path, blocks: list[Block], scratch: Path, pkg: Path, timeout: float):
        self.page, self.blocks, self.pkg, self.timeout = page, blocks, pkg, timeout
        self.dir = scratch / re.sub(r"[^A-Za-z0-9]+", "_", str(page.relative_to(REPO)))
        self.dir.mkdir(parents=True)
        for entry in REPO.iterdir():
            if entry.name not in NOT_LINKED and not entry.name.startswith("build"):
                (self.dir / entry.name).symlink_to(entry)
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env.setdefault("PTO_KERNEL_CACHE", "1")
        self.env = env

    def run(self, argv: list[str], what: Block) -> None:
        try:
            r = subprocess.run(
                argv,
                cwd=self.dir,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            raise DocError(f"{what.where}: ran longer than {self.timeout:.0f} s") from e
        if r.returncode != 0:
            out = (r.stdout + r.stderr).strip().splitlines()
            raise DocError(
                f"{what.where}: {' '.join(argv[:2])} exited {r.returncode}:\n    "
                + "\n    ".join(out[-25:])
            )

    def source_file(self, b: Block, suffix: str) -> Path:
        if b.title:
            return self.dir / b.title
        path = self.dir / f"_block_line{b.line}{suffix}"
        path.write_text(b.text, encoding="utf-8")
        return path

    def execute(self) -> None:
        for b in self.blocks:  # every file first: a block may use one written further down
            if b.title:
                if Path(b.title).is_absolute() or ".." in Path(b.title).parts:
                    raise DocError(f"{b.where}: title {b.title!r} must be a plain relative name")
                (self.dir / b.title).parent.mkdir(parents=True, exist_ok=True)
                (self.dir / b.title).write_text(b.text, encoding="utf-8")
        for b in self.blocks:
            start = time.monotonic()
            self.execute_block(b)
            if b.outcome == "ran":
                b.outcome = f"ran ({time.monotonic() - start:.1f} s)"

    def execute_block(self, b: Block) -> None:
        head = b.marker[0] if b.marker else None
        if head == "fragment":
            b.outcome = "fragment"
        elif head == "skip":
            b.outcome = f"skipped: {b.marker[1]}"
        elif head in ("kernel", "orchestration"):
            if b.kind != "cpp":
                raise DocError(f"{b.where}: '{head}' marks a C++ block, this one is {b.lang!r}")
            self.compile_device_code(b, head, b.marker[1])
            b.outcome = "ran"
        elif b.kind == "python":
            self.run([sys.executable, str(self.source_file(b, ".py"))], b)
            b.outcome = "ran"
        elif b.kind == "sh":
            self.run(["bash", "-euo", "pipefail", str(self.source_file(b, ".sh"))], b)
            b.outcome = "ran"
        elif b.kind == "cpp" and re.search(r"\bint\s+main\s*\(", b.text):
            exe = self.dir / f"_block_line{b.line}.exe"
            inc, lib = self.pkg / "include", self.pkg
            self.run(
                [
                    "c++",
                    "-std=c++17",
                    "-O1",
                    f"-I{inc}",
                    str(self.source_file(b, ".cpp")),
                    "-o",
                    str(exe),
                    f"-L{lib}",
                    "-lpto_runtime_py",
                    f"-Wl,-rpath,{lib}",
                ],
                b,
            )
            self.run([str(exe)], b)
            b.outcome = "ran"
        elif b.title:
            users = [o for o in self.blocks if o is not b and b.title in o.text]
            if not users:
                raise DocError(
                    f"{b.where}: the file {b.title!r} is named by no other block of "
                    "the page, so nothing runs it"
                )
            b.outcome = f"file, used at line {users[0].line}"
        elif b.kind == "cpp":
            raise DocError(
                f"{b.where}: a C++ block without main() and without a doc marker "
                "(fragment, skip, kernel or orchestration) cannot be run"
            )
        else:
            b.outcome = "data"  # json, cmake, text, an output listing: nothing to run

    def compile_device_code(self, b: Block, what: str, arg: str) -> None:
        name = f"doc_line{b.line}"
        if what == "kernel":
            call = f"kc.compile_incore_source(src, {name!r}, pto.CoreType.{arg})"
        else:
            call = f"kc.compile_orchestration_source({arg!r}, src, {name!r})"
        script = self.dir / f"_block_line{b.line}_compile.py"
        script.write_text(
            "import pathlib, pto_runtime as pto\n"
            f"src = pathlib.Path({str(self.source_file(b, '.cpp'))!r}).read_text()\n"
            "kc = pto.KernelCompiler('a2a3sim')\n"
            f"{call}\n",
            encoding="utf-8",
        )
        self.run([sys.executable, str(script)], b)


def default_pages() -> list[Path]:
    return [REPO / "README.md"] + sorted((REPO / "docs").rglob("*.md"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", type=Path, help="Markdown files (default: all)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every block's outcome")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    opts = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # progress in CI
    pages = [p.resolve() for p in opts.pages] or default_pages()
    timeout = float(os.environ.get("PTO_DOC_BLOCK_TIMEOUT", "300"))
    scratch = Path(tempfile.mkdtemp(prefix="pto-doc-blocks-"))
    counts: dict[str, int] = {}
    failures: list[str] = []
    start = time.monotonic()
    try:
        pkg = package_dir()
        for page in pages:
            page_start = time.monotonic()
            try:
                blocks = parse_blocks(page)
                if not blocks:
                    continue
                PageRun(page, blocks, scratch, pkg, timeout).execute()
            except DocError as e:
                failures.append(str(e))
                print(f"FAIL {e}", file=sys.stderr)
                continue
            for b in blocks:
                key = b.outcome.split(" ")[0].rstrip(":,")
                counts[key] = counts.get(key, 0) + 1
                if opts.verbose:
                    print(f"  {b.where} [{b.lang or '-'}] {b.outcome}")
            ran = sum(1 for b in blocks if b.outcome.startswith("ran"))
            print(
                f"ok   {page.relative_to(REPO)}: {len(blocks)} blocks, {ran} run "
                f"({time.monotonic() - page_start:.1f} s)"
            )
    except DocError as e:
        failures.append(str(e))
        print(f"FAIL {e}", file=sys.stderr)
    finally:
        if opts.keep:
            print(f"scratch directories kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(
        f"code blocks of {len(pages)} pages: {summary or 'none'}; {time.monotonic() - start:.1f} s"
    )
    # Blocks that ran (or were used as files by one that ran), blocks that failed (one per
    # failing page: its later blocks are not run), blocks marked fragment or skip.
    passed = counts.get("ran", 0) + counts.get("file", 0)
    skipped = counts.get("fragment", 0) + counts.get("skipped", 0)
    print(f"docs: {passed} passed, {len(failures)} failed, {skipped} skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
