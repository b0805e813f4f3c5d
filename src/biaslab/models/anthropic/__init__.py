"""Claude through Anthropic's own API (Messages, Message Batches)."""
