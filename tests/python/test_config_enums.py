"""tests/python/test_config_enums.py — every enumerated setting takes its enum, a name or a number.

Contract under test (issue 28): each enumerated field of ChipCallConfig and CompileOptions and
the L3/L4 worker's ``mode`` accepts the member of its Python enum, the member's name in any case
and its number; reads back as the member; and refuses a wrong name or number with
InvalidArgumentError (a value of another type with TypeError) naming the field and the value and
listing the names. CompileOptions and ChipCallConfig take the same enum for the same setting.

Table-driven: FIELDS has one row per enumerated field, PLAIN_FIELDS lists the others; a field of
any of these classes in neither fails test_every_field_is_classified.
"""

from __future__ import annotations

import enum
import inspect
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pto_runtime as pto
import pytest

# Each enum and its names in the order of their numbers: the spellings users write.
ENUM_NAMES: dict[type[enum.Enum], list[str]] = {
    pto.WindowOverflow: ["stall", "evict_completed", "error"],
    pto.PipelineScope: ["global", "per_stream", "per_pool", "per_target"],
    pto.DispatchMetric: ["none", "ready"],
    pto.DispatchScope: ["global", "per_pool"],
    pto.DispatchPolicy: ["locality", "round_robin", "work_stealing"],
    pto.LogLevel: ["debug", "info", "warn", "error", "off"],
    pto.ChipMode: ["thread", "process"],
}

# CompileOptions refuses dispatch_* settings while dispatch_metric is NONE.
_DISPATCH_ON = {"dispatch_metric": pto.DispatchMetric.READY}


def _l3_mode(value: Any) -> Any:
    with pto.Worker(level=3, device_ids=[0], num_sub_workers=0, mode=value) as w:
        return w.mode


def _l4_mode(value: Any) -> Any:
    with pto.Worker(level=4, device_ids=[0], mode=value) as w:
        return w.mode


@dataclass
class Field:
    """One enumerated field: where it lives, its enum, and how a test sets and reads it."""

    owner: str  # "ChipCallConfig", "CompileOptions", "Worker(level=3)"
    name: str
    enum: type[enum.Enum]
    # Makes the owner with the field set to value (and `extra`), returns what the field reads.
    make: Callable[[Any], Any]
    # Sets the field on an existing owner, returns what it reads; None: no setter.
    assign: Callable[[Any], Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.owner}.{self.name}"


def _class_field(cls: type, name: str, e: type[enum.Enum], **extra: Any) -> Field:
    def make(value: Any) -> Any:
        return getattr(cls(**extra, **{name: value}), name)

    def assign(value: Any) -> Any:
        obj = cls(**extra)
        setattr(obj, name, value)
        return getattr(obj, name)

    return Field(cls.__name__, name, e, make, assign, dict(extra))


FIELDS = [
    _class_field(pto.ChipCallConfig, "task_window_overflow", pto.WindowOverflow),
    _class_field(pto.ChipCallConfig, "pipeline_scope", pto.PipelineScope),
    _class_field(pto.ChipCallConfig, "dispatch_metric", pto.DispatchMetric),
    _class_field(pto.ChipCallConfig, "dispatch_scope", pto.DispatchScope),
    _class_field(pto.ChipCallConfig, "dispatch_below", pto.DispatchPolicy),
    _class_field(pto.ChipCallConfig, "dispatch_above", pto.DispatchPolicy),
    _class_field(pto.ChipCallConfig, "log_level", pto.LogLevel),
    _class_field(pto.CompileOptions, "window_overflow", pto.WindowOverflow),
    _class_field(pto.CompileOptions, "pipeline_scope", pto.PipelineScope),
    _class_field(pto.CompileOptions, "dispatch_metric", pto.DispatchMetric),
    _class_field(pto.CompileOptions, "dispatch_scope", pto.DispatchScope, **_DISPATCH_ON),
    _class_field(pto.CompileOptions, "dispatch_below", pto.DispatchPolicy, **_DISPATCH_ON),
    _class_field(pto.CompileOptions, "dispatch_above", pto.DispatchPolicy, **_DISPATCH_ON),
    Field("Worker(level=3)", "mode", pto.ChipMode, _l3_mode),
]

# The fields that are not enumerated (numbers, bools, strings), by owner.
PLAIN_FIELDS: dict[str, set[str]] = {
    "ChipCallConfig": {
        "block_dim",
        "aicpu_thread_num",
        "enable_profiling",
        "enable_dump_tensor",
        "enable_pmu",
        "max_tasks",
        "max_args_per_task",
        "max_successors",
        "timeout_ms",
        "task_window",
        "pipeline_depth",
        "batch_deps",
        "dispatch_threshold",
        "active_cores_below",
        "heap_bytes",
        "dep_pool_entries",
        "tensormap_entries",
        "trace_tasks",
        "dump_kernel",
        "dump_first_task",
        "dump_max_tasks",
        "dump_bytes",
        "sim_seed",
        "sim_timing",
        "sim_kernel_time_pct",
    },
    "CompileOptions": {
        "target",
        "platform",
        "opt_level",
        "debug",
        "profiling",
        "host_threads",
        "aicpu_threads",
        "task_window",
        "pipeline_depth",
        "batch_deps",
        "dispatch_threshold",
        "active_cores_below",
        "resolved_platform",
    },
    "Worker(level=3)": {
        "device_ids",
        "num_sub_workers",
        "platform",
        "runtime",
        "heap_bytes",
        "spawn_timeout",
        "heap_wait",
        "close_timeout",
    },
}
# L4 takes L3's options and more.
PLAIN_FIELDS["Worker(level=4)"] = PLAIN_FIELDS["Worker(level=3)"] | {
    "peer_timeout",
    "poll_max",
    "spin",
    "comm",
    "landing_bytes",
}
# Rows whose owner initialises MPI, which this process must not do (other tests fork chip
# processes): test_l4_rows runs the row tests on them in a process of its own.
L4_FIELDS = [Field("Worker(level=4)", "mode", pto.ChipMode, _l4_mode)]


def _properties(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if isinstance(v, property)}


def _parameters(fn: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    return {n: p for n, p in inspect.signature(fn).parameters.items() if n != "self"}


def test_every_field_is_classified() -> None:
    """A new field of any of these classes must join FIELDS or PLAIN_FIELDS."""
    table = {(f.owner, f.name) for f in FIELDS + L4_FIELDS}
    found: dict[str, set[str]] = {
        "ChipCallConfig": _properties(pto.ChipCallConfig),
        "CompileOptions": _properties(pto.CompileOptions),
        "Worker(level=3)": set(_parameters(pto.l3.Worker.__init__)),
        "Worker(level=4)": set(_parameters(pto.l4.Worker.__init__)),
    }
    for owner, names in found.items():
        enumerated = {n for o, n in table if o == owner}
        assert names == enumerated | PLAIN_FIELDS[owner], owner
        assert not enumerated & PLAIN_FIELDS[owner], owner
    # What is in the table really is enumerated: its default reads back as an enum member, and
    # a plain field's does not.
    for cls in (pto.ChipCallConfig, pto.CompileOptions):
        obj = cls()
        for name in found[cls.__name__]:
            is_enum = isinstance(getattr(obj, name), enum.Enum)
            assert is_enum == ((cls.__name__, name) in table), f"{cls.__name__}.{name}"
    for owner, worker in (("Worker(level=3)", pto.l3.Worker), ("Worker(level=4)", pto.l4.Worker)):
        for name, p in _parameters(worker.__init__).items():
            is_enum = isinstance(p.default, enum.Enum)
            assert is_enum == ((owner, name) in table), f"{owner}: {name}"


def test_enums_are_exported_with_their_names() -> None:
    for e, names in ENUM_NAMES.items():
        assert getattr(pto, e.__name__) is e and e.__name__ in pto.__all__
        assert [m.name for m in e] == [n.upper() for n in names], e
    assert {f.enum for f in FIELDS} | {pto.ChipMode} == set(ENUM_NAMES)


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.id)
def test_each_member_is_taken_and_read_back(f: Field) -> None:
    for member in f.enum:
        got = f.make(member)
        assert got is member and type(got) is f.enum
        if f.assign is not None:
            assert f.assign(member) is member


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.id)
def test_names_in_any_case_are_taken(f: Field) -> None:
    for number, name in enumerate(ENUM_NAMES[f.enum]):
        for spelling in (name, name.upper(), name.title()):
            assert f.make(spelling) is list(f.enum)[number], spelling
        if f.assign is not None:
            assert f.assign(name.upper()) is list(f.enum)[number]


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.id)
def test_numbers_are_taken(f: Field) -> None:
    for number, member in enumerate(f.enum):
        assert f.make(number) is member
        if f.assign is not None:
            assert f.assign(number) is member


def _assert_lists_the_names(f: Field, message: str, value: str) -> None:
    assert f"{f.id}={value}" in message or f"{f.owner}: {f.name}={value}" in message, message
    for name in ENUM_NAMES[f.enum]:
        assert f"'{name}'" in message, message
    assert f.enum.__name__ in message, message


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.id)
@pytest.mark.parametrize("bad", ["per_thread", "", "stall ", "0"])
def test_a_wrong_name_is_an_invalid_argument_listing_the_names(f: Field, bad: str) -> None:
    with pytest.raises(pto.InvalidArgumentError) as info:
        f.make(bad)
    assert info.value.code is pto.ErrorCode.INVALID_ARGUMENT
    _assert_lists_the_names(f, str(info.value), repr(bad))
    assert "is not one of" in str(info.value)
    if f.assign is not None:
        with pytest.raises(pto.InvalidArgumentError, match=f.name):
            f.assign(bad)


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.id)
def test_a_wrong_number_is_an_invalid_argument_listing_the_names(f: Field) -> None:
    count = len(ENUM_NAMES[f.enum])
    for bad in (-1, count, 2**40, -(2**70)):
        with pytest.raises(pto.InvalidArgumentError) as info:
            f.make(bad)
        _assert_lists_the_names(f, str(info.value), str(bad))
        assert f"is outside 0..{count - 1}" in str(info.value)
        if f.assign is not None:
            with pytest.raises(pto.InvalidArgumentError, match=f.name):
                f.assign(bad)


def _foreign_member(e: type[enum.Enum]) -> enum.Enum:
    """A member of another setting enum, one whose name or number this enum also has."""
    other = pto.DispatchScope if e is pto.PipelineScope else pto.PipelineScope
    return list(other)[1]


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.id)
def test_a_value_of_another_type_is_a_type_error_listing_the_names(f: Field) -> None:
    for bad in (1.0, True, None, [0], _foreign_member(f.enum)):
        with pytest.raises(TypeError) as info:
            f.make(bad)
        if bad is None and f.owner == "CompileOptions":
            continue  # nanobind refuses None for a keyword argument before the conversion
        _assert_lists_the_names(f, str(info.value), repr(bad))


def test_a_refused_assignment_keeps_the_old_value() -> None:
    c = pto.ChipCallConfig(pipeline_scope="per_pool")
    with pytest.raises(pto.InvalidArgumentError):
        c.pipeline_scope = "per_thread"
    with pytest.raises(TypeError):
        c.pipeline_scope = pto.DispatchScope.PER_POOL  # a str, so only the runtime can tell
    assert c.pipeline_scope is pto.PipelineScope.PER_POOL


# CompileOptions' field -> the ChipCallConfig field call_config() lowers it to.
LOWERED = {
    "window_overflow": "task_window_overflow",
    "pipeline_scope": "pipeline_scope",
    "dispatch_metric": "dispatch_metric",
    "dispatch_scope": "dispatch_scope",
    "dispatch_below": "dispatch_below",
    "dispatch_above": "dispatch_above",
}


COMPILE_OPTION_FIELDS = [f for f in FIELDS if f.owner == "CompileOptions"]


@pytest.mark.parametrize("f", COMPILE_OPTION_FIELDS, ids=lambda f: f.id)
def test_both_doors_take_the_same_enum(f: Field) -> None:
    target = LOWERED[f.name]
    by_config = next(g for g in FIELDS if g.id == f"ChipCallConfig.{target}")
    assert by_config.enum is f.enum
    for member in f.enum:
        kwargs: dict[str, Any] = {**f.extra, f.name: member}
        options = pto.CompileOptions(**kwargs)
        assert getattr(options.call_config(), target) is member
        assert by_config.make(member) is getattr(options, f.name)


def test_read_back_values_repr_pickle_and_compare() -> None:
    c = pto.ChipCallConfig(pipeline_scope="PER_STREAM", dispatch_above=2, log_level="debug")
    assert "pipeline_scope='per_stream'" in repr(c) and "log_level='debug'" in repr(c)
    assert "dispatch_above='work_stealing'" in repr(c)
    assert pickle.loads(pickle.dumps(c)) == c
    assert c == pto.ChipCallConfig(
        pipeline_scope=pto.PipelineScope.PER_STREAM,
        dispatch_above=pto.DispatchPolicy.WORK_STEALING,
        log_level=pto.LogLevel.DEBUG,
    )
    # Modes are StrEnums: a member is its name (as the trace and RunStats spell it).
    assert c.pipeline_scope == "per_stream" and str(c.pipeline_scope) == "per_stream"
    assert f"{c.dispatch_above}" == "work_stealing"
    assert pto.ChipCallConfig().task_window_overflow == "stall"
    # LogLevel is an IntEnum: levels order by severity.
    assert pto.LogLevel.DEBUG < pto.LogLevel.WARN < pto.LogLevel.OFF
    assert pto.ChipCallConfig().log_level is pto.LogLevel.WARN and c.log_level == 0


def test_enum_value_is_the_one_conversion() -> None:
    from pto_runtime import _native

    assert _native.enum_value(pto.ChipMode, "Process", "mode") is pto.ChipMode.PROCESS
    with pytest.raises(pto.InvalidArgumentError, match="here='fibers' is not one of"):
        _native.enum_value(pto.ChipMode, "fibers", "here")
    with pytest.raises(TypeError, match="not one of pto_runtime's setting enums"):
        _native.enum_value(pto.CoreType, "aic", "here")


# The tests above that take one row, for test_l4_rows.
ROW_TESTS: list[Callable[..., None]] = [
    test_each_member_is_taken_and_read_back,
    test_names_in_any_case_are_taken,
    test_numbers_are_taken,
    test_a_wrong_number_is_an_invalid_argument_listing_the_names,
    test_a_value_of_another_type_is_a_type_error_listing_the_names,
]


@pytest.mark.skipif(not pto.l4.mpi_available(), reason="pto_runtime was built without MPI")
def test_l4_rows() -> None:
    program = (
        "import test_config_enums as t\n"
        "for f in t.L4_FIELDS:\n"
        "    for test in t.ROW_TESTS:\n"
        "        test(f)\n"
        "    for bad in ('per_thread', '', 'stall ', '0'):\n"
        "        t.test_a_wrong_name_is_an_invalid_argument_listing_the_names(f, bad)\n"
        "print('rows ok', len(t.L4_FIELDS))\n"
    )
    here = Path(__file__).resolve().parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]),
    }
    p = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300, env=env
    )
    assert p.returncode == 0 and f"rows ok {len(L4_FIELDS)}" in p.stdout, p.stdout + p.stderr
