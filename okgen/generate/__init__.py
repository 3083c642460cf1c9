"""Question generation: agents (LLM or offline extractive), programmatic checks, the validator,
freshness probes, balanced answer positions and the funnel, persisted per article.

Entry point: :func:`okgen.generate.pipeline.run_generate` (the ``okgen generate`` verb and the
daily job call it). Modules are imported on use; nothing here imports ``openai`` at load time.
"""
