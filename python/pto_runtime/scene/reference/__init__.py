"""python/pto_runtime/scene/reference/__init__.py — the reference's scene tests, run unchanged.

Scene tests written for the reference implementation (hw-native-sys/simpler) import
``simpler_setup``, ``simpler.task_interface`` and ``simpler.worker``. :func:`install` puts an
import hook first on ``sys.meta_path`` that answers those names with this package's modules,
which are this runtime's scene layer under the reference's names, and answers
``simpler_setup.goldens`` and ``simpler_setup.tools`` (pure-Python data helpers) from a
reference checkout, by default the one the test file lives in. No package is installed under
those names. A name the reference has and this layer does not is importable but raises
NOT_SUPPORTED naming it when used, so a case that needs the reference's internals says which.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import record

__all__ = ["find_reference_root", "install", "installed_root", "set_root", "stand_in", "uninstall"]

# The reference's module names this package stands in for, and the module of ours each is.
_SHIMS = {
    "simpler": "pto_runtime.scene.reference.simpler",
    "simpler.task_interface": "pto_runtime.scene.reference.task_interface",
    "simpler.worker": "pto_runtime.scene.reference.worker",
    "simpler_setup": "pto_runtime.scene.reference.simpler_setup",
    "simpler_setup.scene_test": "pto_runtime.scene.reference.scene_test",
    "simpler_setup.torch_interop": "pto_runtime.scene.reference.torch_interop",
    "simpler_setup.kernel_compiler": "pto_runtime.scene.reference.kernel_compiler",
    "simpler_setup.pto_isa": "pto_runtime.scene.reference.simpler_setup",
    "simpler_setup.log_config": "pto_runtime.scene.reference.simpler_setup",
    "simpler_setup.environment": "pto_runtime.scene.reference.simpler_setup",
    "simpler._log": "pto_runtime.scene.reference.simpler_setup",
}
_PACKAGES = {"simpler", "simpler_setup"}
# Pure-Python helpers loaded from the reference checkout itself.
_FROM_CHECKOUT = ("simpler_setup.goldens", "simpler_setup.tools")
_ROOTS = ("simpler", "simpler_setup", "_task_interface")


def find_reference_root(start: Path | str) -> Path | None:
    """The nearest folder at or above ``start`` holding ``simpler_setup/goldens``."""
    p = Path(start).resolve()
    for d in (p, *p.parents):
        if (d / "simpler_setup" / "goldens").is_dir():
            return d
    return None


class _Alias(importlib.abc.Loader):
    """Loads a reference module name as one of our modules (the same module object)."""

    def __init__(self, target: str, package: bool) -> None:
        self.target = target
        self.package = package

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.target)
        if self.package and not hasattr(module, "__path__"):
            module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def stand_in(feature: str, name: str) -> type:
    """A placeholder for a reference name this layer lacks: importing it works (so the test
    file's cases can still be listed), using it raises NOT_SUPPORTED naming ``feature``."""

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise record.not_supported(feature, f"{name} (no counterpart in this runtime)")

    class _Meta(type):
        def __getattr__(cls, attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            refuse()

    # A constant of the reference's used in arithmetic at import says what it is too.
    for op in (
        "add",
        "sub",
        "mul",
        "floordiv",
        "truediv",
        "mod",
        "lshift",
        "rshift",
        "and",
        "or",
        "lt",
        "le",
        "gt",
        "ge",
        "int",
        "index",
        "len",
        "iter",
    ):
        setattr(_Meta, f"__{op}__", refuse)
        if op not in ("lt", "le", "gt", "ge", "int", "index", "len", "iter"):
            setattr(_Meta, f"__r{op}__", refuse)
    return _Meta(
        name.rsplit(".", 1)[-1],
        (),
        {"__init__": refuse, "__call__": refuse, "__module__": name.rsplit(".", 1)[0]},
    )


class _Missing(importlib.abc.Loader):
    """A reference module this layer does not provide: it imports, and every name in it is a
    stand_in() that raises NOT_SUPPORTED when used."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__

        def missing(attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            return stand_in("the reference's internal Python API", f"{name}.{attr}")

        module.__getattr__ = missing  # type: ignore[method-assign]
        module.__path__ = []  # its submodules are missing too


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, root: Path | None) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".", 1)[0] not in _ROOTS:
            return None
        if fullname in _SHIMS:
            return importlib.machinery.ModuleSpec(
                fullname,
                _Alias(_SHIMS[fullname], fullname in _PACKAGES),
                is_package=fullname in _PACKAGES,
            )
        for prefix in _FROM_CHECKOUT:
            if fullname == prefix or fullname.startswith(prefix + "."):
                return self._from_checkout(fullname)
        return importlib.machinery.ModuleSpec(fullname, _Missing())

    def _from_checkout(self, fullname: str) -> importlib.machinery.ModuleSpec:
        if self.root is None:
            return importlib.machinery.ModuleSpec(fullname, _Missing())
        rel = Path(*fullname.split("."))
        package = self.root / rel / "__init__.py"
        if package.is_file():
            return importlib.util.spec_from_file_location(  # type: ignore[return-value]
                fullname, package, submodule_search_locations=[str(package.parent)]
            )
        module = (self.root / rel).with_suffix(".py")
        if module.is_file():
            return importlib.util.spec_from_file_location(fullname, module)  # type: ignore[return-value]
        return importlib.machinery.ModuleSpec(fullname, _Missing())


_installed: list[_Finder] = []


def install(root: Path | str | None = None) -> None:
    """Answers the reference's imports from now on; ``root`` is the reference checkout whose
    ``simpler_setup/goldens`` and ``tools`` are used (None: none, or set it later)."""
    uninstall()
    finder = _Finder(Path(root).resolve() if root is not None else None)
    sys.meta_path.insert(0, finder)
    _installed.append(finder)


def set_root(root: Path | str | None) -> None:
    """Changes the checkout goldens and tools come from (modules already imported stay)."""
    if not _installed:
        install(root)
    else:
        _installed[0].root = Path(root).resolve() if root is not None else None


def installed_root() -> Path | None:
    return _installed[0].root if _installed else None


def uninstall() -> None:
    """Removes the hook and every module imported through it."""
    for finder in _installed:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    _installed.clear()
    for name in list(sys.modules):
        if name.split(".", 1)[0] in _ROOTS:
            del sys.modules[name]
