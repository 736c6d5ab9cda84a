"""The ``graphcut`` command line: one click group, one module per sub-command.

Exit status: 0 on success, 1 when a job failed, 2 on a usage error (click's convention).
Logs go to stderr; results to stdout or files.
"""

from __future__ import annotations

import importlib
import importlib.util
import signal

import click

from .commands.common import setup_logging

# sub-command name -> module under graphcut.commands holding a click command of that name
COMMANDS = {
    "segment": "segment",
    "batch": "batch",
    "maxflow": "maxflow",
    "stereo": "stereo",
    "gui": "gui",
}


class LazyGroup(click.Group):
    """Imports a sub-command's module only when it runs, so that `graphcut segment` never pays
    for importing Qt or Dask, and a missing optional extra only breaks its own command."""

    def list_commands(self, ctx):
        return [name for name in COMMANDS if self._module_exists(name)]

    def get_command(self, ctx, name):
        if name not in COMMANDS or not self._module_exists(name):
            return None
        module = importlib.import_module(f"graphcut.commands.{COMMANDS[name]}")
        return getattr(module, name)

    def invoke(self, ctx):
        """Run the sub-command; SIGTERM (see :func:`graphcut._safety.terminate_as_interrupt`)
        and Ctrl-C, once the clean-up ran, end the process with status 143 (128 + 15) and
        130 (128 + 2), as shells report them."""
        from ._safety import Terminated
        try:
            return super().invoke(ctx)
        except Terminated:
            click.echo("terminated (SIGTERM): stopped; no partial output was left", err=True)
            raise SystemExit(128 + int(Terminated.signal)) from None
        except KeyboardInterrupt:
            click.echo("interrupted (Ctrl-C): stopped; no partial output was left", err=True)
            raise SystemExit(128 + int(signal.SIGINT)) from None

    @staticmethod
    def _module_exists(name):
        return importlib.util.find_spec(f"graphcut.commands.{COMMANDS[name]}") is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
@click.version_option(package_name="graphcut")
@click.pass_context
def main(ctx: click.Context, verbose: int) -> None:
    """Graph-cut segmentation and max-flow on the GPU (CuPy) or the CPU (PyMaxflow)."""
    from ._safety import terminate_as_interrupt
    setup_logging(verbose)
    # SIGTERM unwinds like Ctrl-C for the whole sub-command: temporary files are removed
    ctx.with_resource(terminate_as_interrupt())


if __name__ == "__main__":
    main()
