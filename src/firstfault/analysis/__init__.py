"""The orchestrator: one attempt's evidence read (collect/, extract/) and judged (engine/).

`analyze.py` holds the Analysis (an EvidenceSink that keeps the events) and the Analyzer; `parallel.py`
reads a bundle's line files in several processes with the one-process verdict; `ruletest.py` runs the
catalog's own tests through the production extractors.
"""
