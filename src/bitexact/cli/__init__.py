"""The `bitexact` command line: thin, parse arguments, call a layer, print."""

from __future__ import annotations

import sys

try:
    import click

    import bitexact
    from bitexact.config import SettingError
    from bitexact.cli import sessions_views  # noqa: F401  (registers its commands on sessions_group)
    from bitexact.cli.audit import redact_command, repair_command
    from bitexact.cli.bundles import export_command, verify_command
    from bitexact.cli.capture import capture_group
    from bitexact.cli.context import AppContext
    from bitexact.cli.demo import demo_command
    from bitexact.cli.health import health_command
    from bitexact.cli.keys import keys_group
    from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED, fail
    from bitexact.cli.redaction import redaction_group
    from bitexact.cli.runs import runs_command, show_command
    from bitexact.cli.sessions import import_group, sessions_group
    from bitexact.config import home as resolve_home
    from bitexact.errors import BitExactError
except KeyboardInterrupt:
    # Ctrl-C while the modules load (about half a second): exit 130 as once a command runs, not a traceback.
    sys.stderr.write("error: interrupted\n")
    raise SystemExit(130) from None


class _Group(click.Group):
    """Typed BitExact errors that escape a command become one clear line and exit 1, not a traceback;
    Ctrl-C exits 130."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (BitExactError, SettingError) as exc:  # a setting's message names its variable
            fail(str(exc), code=EXIT_FAIL)
        except KeyboardInterrupt:
            # Not click's "Aborted!" and exit 1: 1 means "does not verify", "warnings only", "cut short"...
            fail("interrupted", code=EXIT_INTERRUPTED)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--home", type=click.Path(), envvar="BITEXACT_HOME",
              help="Data directory (default: $BITEXACT_HOME, else ~/.bitexact).")
@click.version_option(bitexact.__version__, prog_name="bitexact")
@click.pass_context
def cli(ctx: click.Context, home: str | None) -> None:
    """BitExact records what an AI agent did as signed, hash-chained evidence
    that anyone can verify offline.

    \b
    Start here (examples):
      bitexact demo                 record, export and verify a sample run
      bitexact runs                 list recorded runs
      bitexact show RUN             the steps of one run
      bitexact export RUN -o F      a signed bundle for a relying party
      bitexact verify F             check a bundle (exit 0 ok, 1 fails, 2 unreadable)
    """
    _printable_streams()
    path = resolve_home(home)  # "~/x" from an env file is not expanded by a shell
    if home is not None:
        given = "BITEXACT_HOME" if ctx.get_parameter_source("home") == click.core.ParameterSource.ENVIRONMENT \
            else "--home"
        if not home.strip():  # Path("") is the working directory: keys and a store would land there
            fail(f"{given} is empty: name the data directory (or leave it unset for ~/.bitexact)", code=EXIT_INPUT)
        try:
            a_file = path.exists() and not path.is_dir()
        except OSError as exc:  # a name the file system cannot hold (too long, ...)
            fail(f"{given}={home}: {exc.strerror or exc}", code=EXIT_INPUT)
        # health reports this as a finding (with --json, as JSON): what is wrong is what it is for.
        if a_file and ctx.invoked_subcommand != "health":
            fail(f"{given}={home} is a file, not a directory: the data directory holds the store, keys and"
                 " journals", code=EXIT_INPUT)
    app = AppContext(path)
    ctx.obj = app
    ctx.call_on_close(app.close)


def _printable_streams() -> None:
    """Evidence may hold lone surrogates (JSON allows them, the store keeps them); printed, they would
    raise UnicodeEncodeError mid-table. Written as ``\\udXXX`` instead, every table and line prints."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot change its error handler keeps its own
                pass


for command in (runs_command, show_command, export_command, verify_command, keys_group,
                redact_command, repair_command, demo_command, sessions_group, import_group, capture_group,
                redaction_group, health_command):
    cli.add_command(command)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="bitexact")
