"""Session metrics computed from the event stream alone (timeline, latency, duplex floor control)."""
