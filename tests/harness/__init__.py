"""Servers and recorded-response replayers shared by the integration tests (Slurm, Prometheus, Kubernetes and
Loki replays, the Blueprint's end-to-end helpers)."""
