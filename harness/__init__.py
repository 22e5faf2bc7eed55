"""apex-voice: the benchmark harness (task packages, simulated user, sessions, grading, CLI)."""

__version__ = "0.1.0"
