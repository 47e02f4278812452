"""The `firstfault` program: one click group whose commands are loaded when they run.

Each command is declared once, with click, in a module of this package; COMMANDS names the module.
A command's module imports click and firstfault.cli.base at the top and what its body needs inside the
body, so `firstfault analyze BUNDLE --format json` loads neither pydantic nor rich nor another
command's libraries (tests/test_startup.py pins it). A command whose extra is not installed says which
`pip install 'firstfault[...]'` to run (cli/base.py's Command).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from firstfault.cli.base import Group

# Command -> "module:attribute" of its declaration, in the order --help lists them.
COMMANDS = {
    "analyze": "firstfault.cli.analyze:analyze",
    "show": "firstfault.cli.analyze:show",
    "serve": "firstfault.cli.serve:serve",
    "run": "firstfault.cli.blueprint:run",
    "watch": "firstfault.cli.blueprint:watch",
    "fleet": "firstfault.cli.fleet:fleet",
    "demo": "firstfault.cli.demo:demo",
    "rules": "firstfault.cli.rules:rules",
    "store": "firstfault.cli.store:store",
}


class LazyGroup(Group):
    """A group that imports a command's module only when that command runs (or --help lists it)."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.lazy)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert isinstance(cmd, click.Command), target
        return cmd


app = LazyGroup(name="firstfault", help="Find where a failed distributed GPU workload began.", lazy=COMMANDS,
                context_settings={"show_default": True})

def main() -> None:
    """The console script `firstfault` and `python -m firstfault`."""
    app.main(sys.argv[1:], prog_name="firstfault")
