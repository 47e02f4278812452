"""What the verdict detail page shows, prepared from the verdict document.

The timeline is drawn in the browser (static/app.js) from the JSON built
here and embedded in the page: one lane per node, each evidence line placed
at its time, causes marked, and a link from each cause to every symptom
line it explains (a symptom's `explained_by` is the cause's category).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from firstfault.model import Cause, EvidenceItem, Verdict

NO_NODE = "(no node)"
MAX_TEXT = 300


def _ms(s: str | None) -> float | None:
    if not s:
        return None
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000.0
    except ValueError:
        return None


def _cause_of(e: EvidenceItem, v: Verdict) -> str | None:
    """The category of the cause a symptom line is explained by (None when it is not linked)."""
    if e.role not in ("symptom", "secondary"):
        return None
    for s in v.symptoms:
        if s.category == e.category and s.explained_by:
            return s.explained_by
    return None


def causes(v: Verdict) -> list[Cause]:
    return ([v.root_cause] if v.root_cause else []) + list(v.candidates)


def timeline(v: Verdict) -> dict[str, Any]:
    """Lanes, events and cause -> symptom links for app.js (times in epoch milliseconds)."""
    lanes = list(dict.fromkeys(v.workload.nodes))
    cause_cats = {c.category for c in causes(v)}
    events: list[dict[str, Any]] = []
    for i, e in enumerate(v.evidence):
        t = _ms(e.time)
        if t is None:
            continue  # no time, no place on a time axis (still in the evidence table)
        lane = e.node or NO_NODE
        if lane not in lanes:
            lanes.append(lane)
        is_cause = e.role in ("cause", "candidate")
        events.append({
            "i": i, "t": t, "lane": lane, "role": e.role, "category": e.category or e.event, "event": e.event,
            "where": f"{e.file}:{e.line}" if e.file else (e.query or e.source), "rank": e.rank,
            "text": e.text[:MAX_TEXT], "cause": is_cause and (e.category in cause_cats or e.category is None),
            "explained_by": _cause_of(e, v),
        })
    # Link each explained symptom to the earliest line of the cause that explains it.
    first_of: dict[str, int] = {}
    for ev in events:
        if ev["cause"] and ev["category"] not in first_of:
            first_of[ev["category"]] = ev["i"]
    links = [
        {"from": first_of[ev["explained_by"]], "to": ev["i"]}
        for ev in events
        if ev["explained_by"] in first_of
    ]
    w = v.workload.window
    return {
        "lanes": lanes,
        "events": events,
        "links": links,
        "window": {"start": _ms(w.start), "end": _ms(w.end)},
        "affected": list(v.affected_nodes),
        # Lanes of the laggard ranks' nodes (a lead, not a cause): marked, not coloured as affected.
        "laggards": sorted({n for ld in v.leads if ld.kind == "laggard_rank" for n in ld.nodes}),
    }


def evidence_rows(v: Verdict) -> list[dict[str, Any]]:
    """The evidence trail in document order (already by time, node, file, line), each port with its far end."""
    return [
        {"i": i, "role": e.role, "time": e.time, "node": e.node, "where": f"{e.file}:{e.line}" if e.file else None,
         "query": e.query, "source": e.source, "event": e.event, "category": e.category, "rank": e.rank,
         "text": e.text, "port": e.port or (e.cable.port if e.cable and e.cable.node == e.node else None),
         "far": far_end(e)}
        for i, e in enumerate(v.evidence)
    ]


def far_end(e: EvidenceItem) -> str | None:
    """The other end of the cable of the port an evidence item names (`leaf01 port 3`), when a fabric said."""
    c = e.cable
    if not c:  # unset: no fabric source named it
        return None
    if e.node == c.switch:
        return f"{c.node} {c.port}"
    return f"{c.switch} port {c.switch_port}"
