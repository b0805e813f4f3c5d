"""The providers' batch APIs behind ``-P batch=true`` (OpenAI's Batch API, Anthropic's Message Batches).

:mod:`.options` parses the options, :mod:`.journal` keeps every submitted batch durably in the cache
directory (and locks it between runs), :mod:`.runner` submits, polls, collects and retries
(provider-neutral), :mod:`.collect` reads an ended batch's lines, :mod:`.errors` says what a batch
endpoint's 404 means, and :mod:`.manage` serves ``biaslab batches``. :mod:`.provider` is what a
provider implements and the plumbing providers share; each provider's wire format lives with its
backend (:mod:`biaslab.models.openai.batch`, :mod:`biaslab.models.anthropic.batch`) and uses only the
backend's public interface (:class:`.provider.BatchHost`).
"""
