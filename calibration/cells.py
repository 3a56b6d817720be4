"""The one test function: each parametrised item is one cell (model, case, level, repeat)."""


def test_cell(cell, assistant_eval_cell_runner):
    assistant_eval_cell_runner(cell)
