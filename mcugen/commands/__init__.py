"""The sub-commands of `mcugen`, one module each, every one exposing `cmd_<name>(args) -> int`.

They orchestrate the pure stages (pipeline, plan, codegen) and the host side (build, run,
measure), print what happened and what it cost, and write the user's files (mcugen.io). Helpers
several commands share live in `_common.py`; cli.py only parses the arguments and dispatches here.
"""
