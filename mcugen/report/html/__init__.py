"""`mcugen report`: one self-contained HTML page of a model on a board.

figures.py builds the figures (pure data: the fit verdict, flash and RAM by part, live bytes per
pool over the steps, per-operator counts and estimated energy of a twin run, the planner
comparison, a measured current trace), charts.py turns them into SVG shapes, render.py writes
the page through templates/report.html.j2 (Jinja, StrictUndefined, autoescaped) with the figures
embedded as JSON, and trace.py reads a power monitor's trace file.
"""
