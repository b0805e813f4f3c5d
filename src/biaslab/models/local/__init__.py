"""Local models: Hugging Face checkpoints and GGUF files with transformers, causal and masked LMs."""
