"""firstfault: where a failed distributed GPU workload began."""

__version__ = "0.1.0"
