"""The fast engine for Llama-architecture models: continuous batching and packed prefix scoring."""
