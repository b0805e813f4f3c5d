"""OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama)."""
