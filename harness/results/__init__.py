"""What a campaign persists per (task, repetition): ``result.json``."""
