"""Dated contexts, memory agents and the stream harness (see docs/memory.md)."""
