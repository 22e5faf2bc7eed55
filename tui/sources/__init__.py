"""Where events come from: a finished session (replay), a runs directory another process writes
(watch), or the in-process bus of a campaign this process runs (``run --tui``)."""
