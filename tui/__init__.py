"""The terminal UI: watch live sessions and replay finished ones (``apex-voice run --tui``,
``apex-voice watch``, ``apex-voice replay``). It reads the harness's events; the harness never
imports it."""
