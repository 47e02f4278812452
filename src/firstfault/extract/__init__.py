"""Extractors: observations in, typed events out (docs/events.md)."""
