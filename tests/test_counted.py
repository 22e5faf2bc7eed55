"""Counts printed with their noun in the right number (issue 36: "1 runs", "1 sessions")."""

from harness.counted import counted


def test_one_is_singular_and_every_other_count_plural():
    assert [counted(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert counted(1, "infra error") == "1 infra error" and counted(3, "infra error") == "3 infra errors"
    assert counted(2, "repetition", "repetitions") == "2 repetitions"
    assert counted(2, "analysis", "analyses") == "2 analyses"
