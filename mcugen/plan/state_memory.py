"""Where the model state lives: the board's RAM, or its external RAM (the disco-f746ng's SDRAM).

The state is the persistent area of the variable tensors (plan/persistent.py): for a training graph
the trained weights in float32, plus their gradient sums with `--accumulate` above 1 and their
momenta with `--momentum`. It is alive across every invoke, so the arena can never share it; the
weights of IC ResNet-8's last block alone take 232,752 B, more than the disco-f746ng's 320 KB of
RAM leaves next to the arena, the stack and the firmware. A board whose external RAM is
memory-mapped (SDRAM behind the FMC) can hold it there: the kernels read and write the state in
place, one pass over each weight per step (forward, backward and update), which costs the
external memory's cycles per byte (board.toml) instead of the RAM's.

`place_state` decides, from the board's `MemoryTarget` (plan/target.py) and the RAM the rest of the
firmware takes:

- `ram`: always in the RAM (the fit verdict says by how much it is over, if it is);
- `slow`: always in the board's external RAM; a board without one is a user error;
- `auto` (the default): in the RAM while the RAM holds it next to everything else, else in the
  external RAM when the board has one (and it holds the state), else in the RAM (the fit verdict
  then reports the shortfall and says that the board has no external memory for the state).

O(1). Weakness: all or nothing, the whole area moves; splitting it (the momenta, read once per
update, to SDRAM, the weights, read twice per step, in RAM) would cost less when RAM is almost
enough.
"""

from __future__ import annotations

from mcugen.errors import McugenError
from mcugen.plan.target import MemoryTarget

#: `--state-memory`: where the state goes.
STATE_MEMORIES = ("auto", "ram", "slow")
DEFAULT = "auto"


def place_state(state_bytes: int, ram_rest: int, target: MemoryTarget, choice: str) -> str:
    """The memory the state of `state_bytes` lives in: "" for the RAM, else the external RAM's
    name (`target.state_memory`). `ram_rest`: the RAM everything else takes (arena, stack,
    firmware). Raises a one-line `McugenError` when `choice` is "slow" and the board has no
    external RAM that holds the state."""
    if choice not in STATE_MEMORIES:
        raise ValueError(f"state memory is one of {', '.join(STATE_MEMORIES)}")
    if state_bytes == 0 or choice == "ram":
        return ""
    slow = target.state_memory()
    holds = slow is not None and state_bytes <= slow.size
    if choice == "slow":
        if slow is None or not holds:
            raise McugenError(
                f"--state-memory slow: {target.board} has no external RAM that holds the "
                f"{state_bytes:,}-byte model state",
                hint="use --state-memory auto, or a board with SDRAM (--board disco-f746ng)",
            )
        return slow.name
    fits_ram = ram_rest + state_bytes <= target.ram_size
    return slow.name if slow is not None and holds and not fits_ram else ""
