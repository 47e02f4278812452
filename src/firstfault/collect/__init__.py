"""The collect step: log and metric connectors that read an attempt's evidence into an EvidenceSink.

- FilesConnector: local files named by bundle-style templates (the bundle scanner itself).
- LokiConnector: LogQL stream selectors per source kind over /loki/api/v1/query_range.
- K8sPodLogsConnector: every container's log of the attempt's pods, previous instances included.
- PromQLConnector: the catalog's metric conditions over /api/v1/query_range.

Each appends one CoverageItem per source kind it covers and ErrorItems for
what failed; none raises for a remote failure.
"""

from firstfault.collect.files import FilesConnector
from firstfault.collect.http import BasicAuth, BearerAuth, FetchError, HttpOptions
from firstfault.collect.k8slogs import K8sPodLogsConnector
from firstfault.collect.loki import LokiConnector
from firstfault.collect.promql import PromQLConnector

__all__ = [
    "BasicAuth",
    "BearerAuth",
    "FetchError",
    "FilesConnector",
    "HttpOptions",
    "K8sPodLogsConnector",
    "LokiConnector",
    "PromQLConnector",
]
