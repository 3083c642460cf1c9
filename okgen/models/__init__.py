"""Model access: the OpenAI-compatible client (agents and the openai eval backend), and the
eval model backends (hf, vllm, openai, random) behind one batch interface."""
