"""The `bitexact` command line: thin, parse arguments, call a layer, print."""

from __future__ import annotations

import sys

try:
    import importlib
    from typing import NamedTuple

    import click

    import bitexact
    from bitexact.config import SettingError
    from bitexact.cli.context import AppContext
    from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED, error_document, fail, note_json_request
    from bitexact.config import home as resolve_home
    from bitexact.errors import BitExactError, StoreDamagedError
except KeyboardInterrupt:
    # Ctrl-C while the modules load: exit 130 as once a command runs, not a traceback.
    sys.stderr.write("error: interrupted\n")
    raise SystemExit(130) from None


DAMAGED_HINT = "`bitexact health` lists what else in the data directory is damaged."
"""The hint under a damaged store's error: health says what else is damaged (the errors do not name health
themselves, since health's findings quote them)."""


class _Lazy(NamedTuple):
    """Where a command lives, and the line ``bitexact --help`` shows for it."""

    module: str
    attribute: str
    summary: str


# Each command's module is imported when that command runs, not before: the capture
# detectors, the sessions readers, httpx and the store cost about 0.4 s and 40 MiB
# to import, which `bitexact verify FILE` and `bitexact --help` never use.
COMMANDS: dict[str, _Lazy] = {
    "capture": _Lazy("bitexact.cli.capture", "capture_group",
                     "The capture policy: what the record keeps of each field."),
    "demo": _Lazy("bitexact.cli.demo", "demo_command",
                  "Record, export and verify a sample run (start here)."),
    "export": _Lazy("bitexact.cli.bundles", "export_command",
                    "Export a run as a signed bundle anyone can verify offline."),
    "health": _Lazy("bitexact.cli.health", "health_command",
                    "Check the policy, keys, runs, journals and store lock."),
    "import": _Lazy("bitexact.cli.sessions", "import_group",
                    "Bring outside evidence (agent session logs) into the store."),
    "keys": _Lazy("bitexact.cli.keys", "keys_group",
                  "Create, show, rotate and publish the recorder key."),
    "redact": _Lazy("bitexact.cli.audit", "redact_command",
                    "Destroy stored values, accountably: the claim lands first."),
    "redaction": _Lazy("bitexact.cli.redaction", "redaction_group",
                       "Approve, reject or inspect a dual-control redaction."),
    "repair": _Lazy("bitexact.cli.audit", "repair_command",
                    "Accept a truncated history; fold orphan journals in."),
    "runs": _Lazy("bitexact.cli.runs", "runs_command",
                  "List recorded runs, newest first."),
    # The views register their commands on the sessions group when their module loads.
    "sessions": _Lazy("bitexact.cli.sessions_views", "sessions_group",
                      "Parse, render, unify and validate agent session logs."),
    "show": _Lazy("bitexact.cli.runs", "show_command",
                  "Show a run's steps: step, kind, prov, ts and a summary."),
    "verify": _Lazy("bitexact.cli.bundles", "verify_command",
                    "Verify a bundle file or a stored run (exit 0, 1 or 2)."),
}
"""Every top-level command, by name."""


_OTHER_WORDS = {"help": "bitexact --help", "version": "bitexact --version", "list": "bitexact runs",
                "ls": "bitexact runs", "init": "bitexact keys init", "status": "bitexact health"}
"""Commands other tools have, and what they are here: spelled alike, `help` was answered "Did you mean
'health'?" and `version` "'sessions', 'verify'"."""


class _Group(click.Group):
    """The top-level group: commands load on first use (:data:`COMMANDS`); typed BitExact errors
    that escape a command become one clear line and exit 1, not a traceback; Ctrl-C exits 130."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = COMMANDS.get(cmd_name)
        if lazy is None:
            return None
        command = getattr(importlib.import_module(lazy.module), lazy.attribute)
        assert isinstance(command, click.Command) and command.name == cmd_name, lazy
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.NoSuchCommand as exc:
            # click suggests from the commands it has loaded, and here none is loaded before it runs: `bitexact
            # rnus` said only "No such command", where every group below says "Did you mean 'runs'?".
            meant = _OTHER_WORDS.get(exc.command_name)
            if meant is not None:  # "help" is close to "health" by spelling only
                raise click.NoSuchCommand(exc.command_name, ctx=ctx, message=(
                    f"No such command {exc.command_name!r}. Did you mean `{meant}`?")) from None
            raise click.NoSuchCommand(exc.command_name, possibilities=COMMANDS, ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing would import every command for its help line.
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name].summary) for name in self.list_commands(ctx)])

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        note_json_request(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return self._invoke(ctx)
        except click.UsageError as exc:  # click prints it with the usage, on stderr
            error_document(exc.format_message(), code=exc.exit_code)
            raise

    def _invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:
            if exc.option_name != "--home" or exc.ctx is None:
                raise
            # --home is the group's option: after the command click suggested "--help", which misleads.
            command = exc.ctx.command_path.removeprefix(f"{ctx.command_path} ")
            raise click.NoSuchOption(exc.option_name, ctx=exc.ctx, message=(
                f"No such option '--home' for `{exc.ctx.command_path}`: --home goes before the command"
                f" (bitexact --home DIR {command} ...), or set BITEXACT_HOME=DIR.")) from None
        except StoreDamagedError as exc:
            fail(str(exc), code=EXIT_FAIL, hint=DAMAGED_HINT)
        except (BitExactError, SettingError) as exc:  # a setting's message names its variable
            fail(str(exc), code=EXIT_FAIL)
        except KeyboardInterrupt as exc:
            # Not click's "Aborted!" and exit 1: 1 means "does not verify", "warnings only", "cut short"...
            # A layer that left something behind (an unsealed import) says what, and the next step, in a note.
            fail("; ".join(["interrupted", *getattr(exc, "__notes__", ())]), code=EXIT_INTERRUPTED)


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

    For scripts, most commands take --json: one JSON document on stdout
    whatever happens, an error as {"error": ..., "exit": N}.
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
        # health reports this as a finding (with --json, as JSON): what is wrong is what it is for. verify
        # reads a bundle file with no data directory at all, and a TARGET that is no file is then no run
        # ("no such file"), as under a data directory that is a dangling link or lies below a file.
        if a_file and ctx.invoked_subcommand not in ("health", "verify"):
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


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="bitexact")
