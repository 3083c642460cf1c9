"""Evaluation: prompts, contexts, scoring modes, the runner behind ``okgen eval``, statistics,
reports, exports to other harnesses and imports of external multiple-choice sets."""
