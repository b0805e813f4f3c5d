"""The fsb-judge probe: an LLM rates the degree of gender bias of texts against human BWS scores."""
