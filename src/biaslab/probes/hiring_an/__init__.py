"""HiringAn: hiring decisions by candidate gender and occupation."""
