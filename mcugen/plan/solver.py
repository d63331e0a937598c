"""Running CP-SAT so that Ctrl-C stops it within a moment, and leaves Python's own SIGINT handler
in place.

By default CP-SAT installs a SIGINT handler of its own for the length of a solve and restores the
default action after it, not Python's handler: once any solve had run, a later Ctrl-C killed the
process outright (no message, no clean-up of temporary files or half-written outputs). Here the
solve runs with `catch_sigint_signal` off in a worker thread (the solve releases the GIL); the main
thread waits on it in short steps, so Python's handler raises KeyboardInterrupt there at once,
the search is told to stop, and the interrupt goes on up. The answer is the same as a plain
`solver.solve(model)`: the thread changes nothing the solver sees.
"""

from __future__ import annotations

import threading
from typing import Any

from mcugen import progress

#: How often the waiting thread looks up, in seconds (the delay a Ctrl-C can see).
_POLL_SECONDS = 0.05


def solve(solver: Any, model: Any) -> Any:
    """`solver.solve(model)`, interruptible by Ctrl-C (KeyboardInterrupt) at any moment."""
    solver.parameters.catch_sigint_signal = False
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["status"] = solver.solve(model)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=work, name="cp-sat", daemon=True)
    thread.start()
    try:
        with progress.step("CP-SAT search"):
            while thread.is_alive():
                thread.join(_POLL_SECONDS)
    except BaseException:
        solver.stop_search()
        thread.join()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["status"]
