"""Example adapters for third-party memories (``okgen.memories`` entry points)."""
