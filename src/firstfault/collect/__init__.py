"""The collect step: an attempt's evidence read into an EvidenceSink (collect/evidence.py).

- scan.py: the chunked, prefiltered line scanner; sink.py: the sink contract, bundle reading, coverage;
  wire.py: the Service's request form; base.py: the connector contracts; http.py: the HTTP layer.
- FilesConnector: local files named by bundle-style templates (the bundle scanner itself).
- LokiConnector: LogQL stream selectors per source kind over /loki/api/v1/query_range.
- K8sPodLogsConnector: every container's log of the attempt's pods, previous instances included.
- PromQLConnector: the catalog's metric conditions over /api/v1/query_range.

Each appends one CoverageItem per source kind it covers and ErrorItems for
what failed; none raises for a remote failure.
"""
