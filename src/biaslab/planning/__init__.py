"""Power planning: how many items a probe needs to detect an effect on its headline metric."""
