"""Test and benchmark helpers that ship with okgen: real local HTTP servers and synthetic data.

* :mod:`okgen.testing.web`: a threaded HTTP server on 127.0.0.1 serving scripted routes
  (feeds, pages, errors, slow or endless bodies, redirects).
* :mod:`okgen.testing.openai_server`: a real HTTP server speaking the OpenAI chat-completions
  and completions API with scripted replies, latency and failures.
* :mod:`okgen.testing.corpus`: a deterministic synthetic news corpus with entities, numbers
  and dates, for tests and benchmarks that need many articles.

Nothing here touches the network beyond 127.0.0.1.
"""
