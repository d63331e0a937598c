"""The link to boards: QEMU twins, serial protocol, flashing, power monitors, host-process runs."""
