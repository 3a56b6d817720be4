"""The run: the session that sequences each cell (S4), and the small jobs it calls.

One direction of use: the plan (``planning``) and the folders (``folders``, ``results_folder``,
``writer_lock``) come first, then the providers (``provider_setup``), the checkpoints
(``cell_checkpoints``), the conversation, the record (``cell_records``, ``usage``, ``spent``,
``skips``) and the stops (``cell_stops``); ``session`` is the sequencer over them and
``progress``/``scheduling`` serve the plugin. Nothing here imports a suite: the session gets one
from the registry by name (``suites.make_suite``).
"""
