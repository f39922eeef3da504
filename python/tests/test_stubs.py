"""The installed type stubs (rewind/_rewind.pyi) parse and declare every name the package takes
from the extension module, with docstrings on the schedules."""

import ast
import pathlib

import rewind
import rewind._rewind as extension

STUB = pathlib.Path(rewind.__file__).with_name("_rewind.pyi")


def declared(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
    return names


def test_every_public_name_has_a_stub():
    names = declared(ast.parse(STUB.read_text()))
    public = [n for n in dir(extension) if not n.startswith("_")]
    assert public and not [n for n in public if n not in names]


def test_schedules_iterate_to_actions_in_the_stubs():
    stub = STUB.read_text()
    assert "def __iter__(self) -> Schedule" in stub
    assert "def __next__(self) -> Action" in stub
    schedule = declared(ast.parse(stub))["RevolveSchedule"]
    assert ast.get_docstring(schedule).startswith("Griewank & Walther")


def test_the_package_documents_itself():
    assert "time loop" in rewind.__doc__
    for name in ("RevolveSchedule", "OnlineSchedule", "simulate", "plan_checkpoints",
                 "plan_for_memory", "InvalidArgument", "ButcherTableau"):
        assert getattr(rewind, name).__doc__, name


def test_all_names_every_public_name():
    # help and inspect stay Python's under import *
    commands = set(rewind.commands.__all__) - {"help", "inspect"}
    public = {n for n in dir(extension) if not n.startswith("_")} | {"plan_for_memory"} | commands
    assert set(rewind.__all__) == public
    assert all(hasattr(rewind, n) for n in rewind.__all__)
    assert rewind.help is rewind.commands.help and rewind.inspect is rewind.commands.inspect


def test_the_commands_module_has_stubs_where_it_is_installed():
    if not rewind.commands_available():
        return  # installed without the C++ build's module: nothing to check (test_commands.py)
    import rewind._commands as commands

    stub = pathlib.Path(rewind.__file__).with_name("_commands.pyi")
    names = {node.name for node in ast.parse(stub.read_text()).body
             if isinstance(node, ast.FunctionDef)}
    assert names == {"execute", "option_names", "help_text"}
    assert all(getattr(commands, n).__doc__ for n in names)


def test_actions_compare_with_anything():
    assert rewind.Action.advance(3) != (3,)
    assert rewind.Action.advance(3) != None  # noqa: E711
    assert rewind.Action.advance(3) == rewind.Action(rewind.ActionKind.advance, 3)
