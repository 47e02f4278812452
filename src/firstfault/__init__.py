"""firstfault: where a failed distributed GPU workload began.

The public API (everything else is internal and may move):

    import firstfault
    verdict = firstfault.analyze("examples/nvlink-xid149")      # a bundle directory -> Verdict
    print(verdict.root_cause.category if verdict.root_cause else verdict.outcome)

    catalog = firstfault.load_catalog("my-rules/")               # or shipped_catalog()
    analyzer = firstfault.Analyzer(catalog)                      # build once, analyse many
    verdict = analyzer.analyze_bundle(firstfault.load_bundle(path))

    with firstfault.FirstfaultClient("http://service:8080") as client:   # needs firstfault[blueprint]
        verdict = client.analyze_bundle_tar(path)               # a bundle directory or .tar

Names are resolved on first use, so `import firstfault` costs nothing and the
base install (no Service, no HTTP client) imports cleanly.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from firstfault.analysis.analyze import Analyzer, analyze
    from firstfault.bundle import Bundle, BundleError, load_bundle
    from firstfault.client import FirstfaultClient, FirstfaultError
    from firstfault.engine.loader import Catalog, CatalogError, load_catalog, shipped_catalog
    from firstfault.model import Cause, Event, Verdict

# name -> the module that defines it
_HOME = {
    "analyze": "firstfault.analysis.analyze",
    "Analyzer": "firstfault.analysis.analyze",
    "Verdict": "firstfault.model",
    "Cause": "firstfault.model",
    "Event": "firstfault.model",
    "Catalog": "firstfault.engine.loader",
    "CatalogError": "firstfault.engine.loader",
    "load_catalog": "firstfault.engine.loader",
    "shipped_catalog": "firstfault.engine.loader",
    "Bundle": "firstfault.bundle",
    "BundleError": "firstfault.bundle",
    "load_bundle": "firstfault.bundle",
    "FirstfaultClient": "firstfault.client",
    "FirstfaultError": "firstfault.client",
}

__all__ = [
    "Analyzer", "Bundle", "BundleError", "Catalog", "CatalogError", "Cause", "Event", "FirstfaultClient",
    "FirstfaultError", "Verdict", "__version__", "analyze", "load_bundle", "load_catalog", "shipped_catalog",
]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'firstfault' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return __all__
