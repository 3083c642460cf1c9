"""okgen: fresh, leak-free knowledge benchmarks from the day's news.

Importing this package is cheap: it pulls in none of the heavy optional dependencies
(torch, transformers, vllm, colbert, faiss, openai). Those are imported by the modules that
need them, on first use.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
