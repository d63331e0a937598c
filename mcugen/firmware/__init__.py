"""Firmware from a generated model: its build project, compile, sizes and exported library."""
