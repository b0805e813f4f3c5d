"""The providers' batch APIs behind ``-P batch=true`` (OpenAI's Batch API, Anthropic's Message Batches).

:mod:`.options` parses the options, :mod:`.journal` keeps every submitted batch durably in the cache
directory, :mod:`.runner` submits, polls, collects and retries (provider-neutral), and
:mod:`.manage` serves ``biaslab batches``. Each provider's wire format lives with its backend
(:mod:`biaslab.models.openai.batch`, :mod:`biaslab.models.anthropic.batch`).
"""
