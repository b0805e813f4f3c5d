"""vLLM in this process: ``vllm/<hub id or dir>`` (:mod:`.backend`)."""
