"""Planners: operator order, tensor lifetimes and arena layout, as pure functions of plain data."""
