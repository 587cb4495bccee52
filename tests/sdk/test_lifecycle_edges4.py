"""Run lifecycle and concurrency of the Python SDK (the fourth review): each test is a bug it found, fixed.

Every test here fails on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import bitexact
from sdk.conftest import entries

# -- 1. fork() of a process with an open run --------------------------------------------------------

_FORK_AGENT = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path

    import bitexact
    from bitexact.recording.journal import journal_dir, take_live_lock

    home = Path(os.environ["BITEXACT_HOME"])
    scope = bitexact.run(journal_small=True)  # small entries durable in a journal slot before the call returns
    run = scope.__enter__()
    run.marker("before the fork")
    assert run.drain(30)
    directory = journal_dir(home, run.run_id)
    before = sorted(p.name for p in directory.iterdir())

    pid = os.fork()
    if pid == 0:
        # The child leaves the `with bitexact.run():` block it was forked in, as the parent will.
        try:
            scope.__exit__(None, None, None)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)

    after = sorted(p.name for p in directory.iterdir()) if directory.exists() else []
    lock = take_live_lock(directory)  # what `bitexact repair` takes: None while a process records the run
    repair_could_fold = lock is not None
    if lock is not None:
        os.close(lock)
    run.marker("after the fork")
    scope.__exit__(None, None, None)
    print(json.dumps({"before": before, "after": after, "repair_could_fold": repair_could_fold,
                      "sealed": run.sealed}))
""")


def test_a_forked_child_ending_its_copy_of_the_run_leaves_the_parents_journals_and_live_lock_alone(
    tmp_path: Path, home: Path,
) -> None:
    """docs/sdk.md: "A run being recorded holds a lock file in its journal directory (.recording.lock,
    flock) from its first journal to its end: bitexact repair of a run a live process is still recording
    is refused, since folding or removing its journals would write an entry twice or lose one whose call
    returned"; capture-controls.md: "an entry whose call returned is never lost". A child forked while
    the run is open inherits the Run; when it ends its copy (leaves the `with` block it was forked in),
    Run._finish closes the parent's slots file with remove=True and _release_live_lock unlinks the
    parent's .recording.lock. The parent keeps recording into a slots file that is no longer in its
    journal directory (lost to repair after a crash), and a repair beside it is no longer refused."""
    script = tmp_path / "fork_agent.py"
    script.write_text(_FORK_AGENT)
    env = {**os.environ, "BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": "off", "BITEXACT_DRAIN_TIMEOUT": "30"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert ".recording.lock" in report["before"]
    slots = [name for name in report["before"] if name.startswith("slots-")]
    assert slots, report
    assert report["after"] == report["before"], (
        f"the child's exit removed the live parent's journal files: {report['before']} -> {report['after']}")
    assert not report["repair_could_fold"], "a repair could take the live lock of a run the parent still records"


# -- 2. a run exited in another context than the one that entered it ------------------------------


def test_an_async_generator_agent_stepped_by_wait_for_ends_its_run_without_raising() -> None:
    """docs/sdk.md (and RunScope.__call__): for a generator, "Open the run inside the generator (with
    bitexact.run(): inside it)"; and "what the agent ... raises never changes". asyncio.wait_for runs
    each step of an async generator in a task of its own (a copy of the caller's context), so the
    `async with bitexact.run()` inside it is exited in another context than the one that entered it.
    RunScope.__aexit__ then calls active._current.reset(token), which raises ValueError ("<Token ...>
    was created in a different Context"): the agent's `async for` ends with a ValueError instead of
    StopAsyncIteration. (A sync generator with `with bitexact.run():` stepped in one thread and closed
    in another gets the same ValueError from gen.close().)"""

    async def agent() -> Any:
        async with bitexact.run(name="streaming") as r:
            r.marker("first")
            yield 1
            yield 2

    async def consume() -> tuple[list[int], BaseException | None]:
        gen = agent()
        got: list[int] = []
        try:
            while True:
                got.append(await asyncio.wait_for(gen.__anext__(), 60))
        except StopAsyncIteration:
            return got, None
        except BaseException as exc:  # noqa: BLE001 - what the agent would see
            return got, exc

    got, raised = asyncio.run(consume())
    assert got == [1, 2]
    assert raised is None, f"the agent's generator ended with {raised!r} instead of StopAsyncIteration"


# -- 3. @bitexact.run on an async callable object ------------------------------------------------


def test_the_run_decorator_on_an_async_callable_object_records_the_call_in_its_run() -> None:
    """docs/sdk.md: "@bitexact.run(...) / @bitexact.run on a sync or async function (each call is one
    run)"; tools.py already treats "an object whose __call__ is async def" as async (an async tool).
    RunScope.__call__ only checks inspect.iscoroutinefunction(fn): for an object with an `async def
    __call__` it takes the sync wrapper, which opens the run, gets the coroutine back without running
    any of it, and seals the run at once. The body then runs in no run: what it records is lost, and
    the run holds nothing of the call (the case a generator function is refused for)."""
    seen: list[Any] = []

    class Agent:
        async def __call__(self, question: str) -> str:
            run = bitexact.current_run()
            seen.append(run)
            if run is not None:
                run.marker(f"answering {question}")
            return "answer"

    agent = bitexact.run(name="object-agent")(Agent())
    assert asyncio.run(agent("q1")) == "answer"
    (run,) = seen
    assert run is not None, "the agent's call ran outside the run the decorator opened for it"
    assert [e["data"].get("note") for e in entries(run.run_id) if e["kind"] == "marker"] == ["answering q1"]


# -- 4. the SDK's own reads recorded as the agent's nondeterminism ---------------------------------


def test_starting_a_nested_run_records_none_of_its_own_random_reads_into_the_outer_capturing_run() -> None:
    """nondet.py: "every read made in the run's context (not by BitExact itself) is an observed nondet
    entry"; docs/sdk.md: the SDK's own reads "are never recorded as the agent's nondeterminism".
    Run.start makes a journal_small run's slots file (secrets.token_hex for its name, os.urandom for its
    journal keys) outside active.busy(), before the new run is bound to the context: inside an outer
    run with capture_nondeterminism=True, those reads are recorded into the OUTER run as nondet entries
    the agent never made (five here: the host key made on first use, the slots file's name and its
    journal keys; more when the nested run opens a new data directory and makes its recorder key)."""
    with (bitexact.run(name="outer", capture_nondeterminism=True) as outer,
          bitexact.run(name="inner", journal_small=True) as inner):  # nested: inner opens inside outer
        inner.marker("inner work")
    nondet = [e["data"]["source"] for e in entries(outer.run_id) if e["kind"] == "nondet"]
    assert nondet == [], f"the outer run holds the SDK's own reads as the agent's: {nondet}"
