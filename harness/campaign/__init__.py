"""Campaigns: every (task, repetition) cell of one model, resumable, parallel and leak-free."""
