"""Research data: registry, download and verification."""

from biaslab.data.registry import FILES, checksums, data_path

__all__ = ["FILES", "checksums", "data_path"]
