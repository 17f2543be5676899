"""bench/driver — the modules of bench/run.py: plan, runner, tables, plot."""
