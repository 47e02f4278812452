"""Builds the verdict document (spec/verdict.md) from an attribution."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from firstfault.catalog.tables import nccl_result_table
from firstfault.engine.attribute import Attribution, Finding, SymptomHit, event_sort_key, is_terminal, render, weight
from firstfault.engine.leads import verdict_leads
from firstfault.engine.loader import Catalog
from firstfault.engine.ports import cable_of, port_of
from firstfault.extract.traceback import controller_record, says_calm, says_retrying
from firstfault.model import (
    CatalogRef,
    Cause,
    CoverageItem,
    ErrorItem,
    Event,
    Evidence,
    EvidenceItem,
    Symptom,
    Unrecognized,
    Verdict,
    WorkloadRef,
    iso,
    iso_order,
)
from firstfault.spec import PROVISIONAL_AT_ONCE, PROVISIONAL_CONFIRM, category_matches, is_failure, outcome_of


def _cause(f: Finding) -> Cause:
    rule = f.rule
    if f.widespread and rule.widespread is not None:
        summary = render(rule.widespread.summary, f)
        action = rule.widespread.recommended_action
    else:
        summary = render(rule.summary, f)
        action = rule.recommended_action
        vendor = f.events[0].fields.get("vendor") if f.events and rule.vendor_actions else None
        if isinstance(vendor, str) and vendor in rule.vendor_actions:
            action = rule.vendor_actions[vendor]
        for name, by_value in sorted(rule.field_actions.items()):
            said = f.events[0].fields.get(name) if f.events else None
            if isinstance(said, str) and said in by_value:
                action = by_value[said]
                break
    why = (
        f"rule {rule.id}: {f.count} matching event(s) on {len(f.nodes)} node(s), first at "
        f"{iso(f.first) or 'an unknown time'}"
    )
    if f.events and all(e.fields.get("truncated") is True for e in f.events):
        ev = f.events[0].evidence
        why += (f"; the traceback that begins at {ev.file}:{ev.line} stops before its exception line (the process"
                " was stopped while printing it, or the log was cut), so the exception's class is not in the evidence")
    elif f.events and all(is_terminal(e) and e.fields.get("report") is True for e in f.events):
        ev = f.events[0].evidence
        why += (f"; read from the program's error report and its chain of causes, the deepest that a reader knows"
                f" ({ev.file}:{ev.line}), its process's last word")
    elif f.events and all(is_terminal(e) for e in f.events):
        ev = f.events[0].evidence
        why += (f"; the traceback was not in the evidence, only its last line ({ev.file}:{ev.line}), read as the"
                " traceback would be")
    elif f.events and all(e.fields.get("words") is True for e in f.events):
        ev = f.events[0].evidence
        why += (f"; read from the words of an error line no rule understood ({ev.file}:{ev.line}), in a failed"
                " attempt where nothing else established a cause")
    elif f.events and f.events[0].evidence.file:
        # the line the summary was read from, so that a reader can open it (the cases above name theirs)
        ev = f.events[0].evidence
        why += f" ({ev.file}:{ev.line})" if ev.line is not None else f" ({ev.file})"
    return Cause(
        category=f.category,
        domain=f.domain,
        summary=summary,
        nodes=list(f.nodes),
        devices=list(f.devices),
        first_seen=iso(f.first),
        rule=rule.id,
        recommended_action=render(action, f, action=True) if action else None,
        count=f.count,
        why=why,
    )


def _evidence(ev: Event, role: str, category: str | None) -> EvidenceItem:
    e = ev.evidence
    return EvidenceItem(
        role=role,  # type: ignore[arg-type]
        source=e.source,
        node=ev.node,
        file=e.file,
        line=e.line,
        time=iso(ev.time),
        event=ev.kind,
        text=e.text,
        query=e.query,
        rank=ev.rank,
        category=category,
        port=port_of(ev),
        cable=cable_of(ev),
    )


def _symptoms(hits: list[SymptomHit]) -> list[Symptom]:
    groups: dict[tuple[str, str | None], list[SymptomHit]] = {}
    for h in hits:
        expl = h.explained_by.category if h.explained_by is not None else None
        groups.setdefault((h.category, expl), []).append(h)
    out: list[Symptom] = []
    for (cat, expl), hs in groups.items():
        evs = [h.event for h in hs]
        # the first time in event_sort_key's order (its leading key, _tkey: times as their iso strings order, then
        # none), found without sorting a 16k-rank job's symptoms: the least of them in that order
        first = min((t for e in evs if (t := e.earliest()) is not None), key=iso_order, default=None)
        out.append(
            Symptom(
                category=cat,
                nodes=sorted({e.node for e in evs if e.node}),
                ranks=sorted({e.rank for e in evs if e.rank is not None}),
                count=sum(weight(e) for e in evs),
                first_seen=iso(first),
                explained_by=expl,
            )
        )
    out.sort(key=lambda s: (s.first_seen is None, s.first_seen or "", s.category, s.explained_by or ""))
    return out


def _unordered_notes(candidates: list[Finding]) -> list[str]:
    """Why a candidate's time does not order it: no stamp read, or a start known only between two samples."""
    out: list[str] = []
    for c in candidates:
        where = ", ".join(c.nodes) or "the job"
        if c.first is None:
            out.append(f"{c.category} on {where} has no time in the evidence, so nothing orders it against the others.")
        elif c.began_by is not None and c.began_by > c.first:
            out.append(f"{c.category} on {where} began between {iso(c.first)} and {iso(c.began_by)} "
                       f"(the samples before and at the change).")
    return out


# How many lines of failures no rule reads the notes cite.
_SEEN_CITED = 3


def _relayed_note(symptoms: Sequence[SymptomHit]) -> str | None:
    """Where to look when the first symptom is a collective library's result that says a call of the environment's
    failed and not which (catalog/cuda.yaml `whose: environment`): NCCL's own WARN lines name it, or a rerun with
    NCCL_DEBUG=INFO prints them."""
    env = {r.name: r for r in nccl_result_table().values() if r.whose == "environment"}
    # the first in time of the symptoms that name such a result (min: the first of a stable sort, without sorting a
    # 16k-rank job's symptoms)
    h = min((h for h in symptoms if isinstance(name := h.event.fields.get("nccl_result"), str) and name in env),
            key=lambda h: event_sort_key(h.event), default=None)
    if h is None:
        return None
    row = env[str(h.event.fields["nccl_result"])]
    ev = h.event.evidence
    where = f"{ev.file}:{ev.line}" if ev.line is not None else ev.file or "the evidence"
    return (f"NCCL's {row.name} ({where}): {row.failed or 'a call NCCL made'} failed; the NCCL WARN lines "
            f"before it say which. Where the evidence has none, rerun with NCCL_DEBUG=INFO.")


def _hang_note(symptoms: Sequence[SymptomHit]) -> str | None:
    """Where to look when the first hang reset of a GPU engine (sym-gpu-engine-hang) stands with no cause: the line
    that names the engine, the device and the process whose job hung (catalog/accel.yaml class `hang`)."""
    h = min((h for h in symptoms if h.category == "gpu.hang" and h.explained_by is None),
            key=lambda h: event_sort_key(h.event), default=None)  # the first in time (as _relayed_note)
    if h is None:
        return None
    ev = h.event
    where = f"{ev.evidence.file}:{ev.evidence.line}" if ev.evidence.line is not None else ev.evidence.file
    driver = ev.fields.get("driver") or "the GPU driver"
    detail = " ".join(str(ev.fields.get("detail") or ev.evidence.text).split())[:200]
    device = f" {ev.device}" if ev.device else ""
    return (f"{driver} reset a hung engine on {ev.node or 'the node'}{device} ({where or 'the evidence'}: "
            f"{detail}): a job's work on it did not finish in time. The reset does not say why (the job's "
            f"kernel, the driver or its firmware, the device); look at what that process ran last, and at the "
            f"driver's and firmware's versions if it repeats with other work.")


def build_verdict(
    *,
    catalog: Catalog,
    workload: WorkloadRef,
    terminal_state: str | None,
    att: Attribution,
    coverage: list[CoverageItem],
    errors: list[ErrorItem],
    now: datetime | None = None,
    unrecognized: list[Unrecognized] | None = None,
    provisional: bool = False,
    end_from: Evidence | None = None,
    failure_seen: Sequence[Evidence] = (),
) -> Verdict:
    """`provisional`: the attempt still runs (outcome `running`); the attribution is judged as for a failure,
    and only a root cause that may stand while it runs (`provisional_root`) is named. `end_from`: the line of the
    job's own output the terminal state was read from (engine/normalise.py `own_end`), cited in the notes.
    `failure_seen`: the lines of the failures the evidence holds that no rule reads (a worker group that failed and
    was restarted, a traceback cut before its exception line, an exception chain of envelopes only: a launcher's
    summary of a worker's failure, a bare EOFError): a run whose end is not shown is then not said to be well
    (`none`), and where nothing else was found they are where to look."""
    outcome = "running" if provisional else outcome_of(terminal_state)
    settings = catalog.settings
    notes: list[str] = []
    root = att.root
    candidates = att.candidates
    secondary = list(att.secondary)
    if provisional:
        # Ambiguity is not a provisional verdict: precision first, the final verdict says it.
        why = (provisional_root(root, att) if root is not None else
               f"ambiguous between {', '.join(c.category for c in candidates)}" if candidates else None)
        if why is not None:
            notes.append(f"The attempt still runs and no cause stands yet ({why}).")
            root, candidates = None, []
        elif root is not None:
            notes.append(f"Provisional: the attempt still runs. Earliest causal event: "
                         f"{render(root.rule.summary, root) if not root.widespread else root.category}"
                         f" at {iso(root.first) or 'an unknown time'} (rule {root.rule.id}).")
        domain = root.domain if root is not None else "unknown"
        secondary = []  # while it runs, only the cause that stands is said
    elif not is_failure(outcome):
        domain = "none"
        secondary = ([root] if root else []) + candidates + secondary
        root, candidates = None, []
        notes.append(f"The workload did not fail (terminal state {terminal_state}); nothing is attributed.")
    elif candidates:
        domain = "ambiguous"
        notes.append(
            f"{len(candidates)} independent causes began within {settings.ambiguity_window:g} s of each other "
            f"(as far as their times tell) and none explains the others: "
            f"{', '.join(c.category for c in candidates)}."
        )
        notes += _unordered_notes(candidates)
    elif root is not None:
        domain = root.domain
        notes.append(
            f"Earliest causal event: {render(root.rule.summary, root) if not root.widespread else root.category}"
            f" at {iso(root.first) or 'an unknown time'} (rule {root.rule.id})."
        )
    elif outcome == "unknown" and not (failure_seen or any(not h.all_clear for h in att.symptoms) or att.leads
                                       or errors) and all(
            says_calm(u.first.text) or says_retrying(u.first.text) or controller_record(u.first.text)
            for u in unrecognized or ()):
        # The end is not shown and nothing in the evidence failed (no event a rule reads, no line the catalog
        # missed that does not call itself a warning (or a record below one: INFO, DEBUG) or one try of a loop that
        # goes on, a Kubernetes controller's error record among them, no source that could not
        # be read): `unknown` would say that it failed (docs/verdict.md, "A run whose end is not shown").
        domain = "none"
        notes.append("No failure evidence was found in what was collected, and nothing says how the workload ended; "
                     "nothing is attributed.")
    else:
        domain = "unknown"
        if att.symptoms:
            cats = sorted({h.category for h in att.symptoms})
            notes.append("Only symptoms were found (" + ", ".join(cats) + "); no event establishes where it began.")
            relayed = _relayed_note(att.symptoms)
            if relayed is not None:
                notes.append(relayed)
            hang = _hang_note(att.symptoms)
            if hang is not None:
                notes.append(hang)
        elif failure_seen:
            where = "; ".join(f"{e.file}:{e.line}" + (f" ({' '.join(e.text.split())[:120]})" if e.text else "")
                              for e in failure_seen[:_SEEN_CITED])
            more = f" and {len(failure_seen) - _SEEN_CITED} more" if len(failure_seen) > _SEEN_CITED else ""
            notes.append(f"A failure was seen that says no cause of its own; look at {where}{more}.")
        else:
            notes.append("No failure evidence was found in what was collected.")
        gaps = [c for c in coverage if c.status in ("missing", "partial", "empty", "error")]
        if gaps:
            notes.append(
                "Coverage gaps: "
                + "; ".join(
                    f"{c.source} {c.status} ({c.nodes_seen} of {c.nodes_expected} nodes)" for c in gaps
                )
                + "."
            )
    if end_from is not None and not provisional:
        where = f"{end_from.file}:{end_from.line}" if end_from.line is not None else end_from.file or "the evidence"
        notes.append(f"No scheduler record or workload.yaml gives the end state; it was read from the job's own "
                     f"output ({where}: {' '.join(end_from.text.split())[:200]}).")
    explained = [h for h in att.symptoms if h.explained_by is not None]
    if explained and domain not in ("none", "unknown"):
        cats = sorted({h.category for h in explained})
        nodes = sorted({h.event.node for h in explained if h.event.node})
        by = "the candidates" if candidates else "it"
        notes.append(
            f"{sum(weight(h.event) for h in explained)} symptom event(s) ({', '.join(cats)}) on "
            f"{len(nodes)} node(s) follow the cause and are explained by {by}."
        )
    for s in secondary:
        notes.append(
            f"Later independent finding: {s.category} on {', '.join(s.nodes) or '?'} at {iso(s.first) or '?'}."
        )

    evidence: list[EvidenceItem] = []
    k = settings.evidence_per_finding
    if root is not None:
        evidence += [_evidence(e, "cause", root.category) for e in root.events[:k]]
    for c in candidates:
        evidence += [_evidence(e, "candidate", c.category) for e in c.events[:k]]
    per_cat: dict[str, int] = {}
    for h in att.symptoms:
        n = per_cat.get(h.category, 0)
        if n < settings.evidence_per_symptom:
            per_cat[h.category] = n + 1
            evidence.append(_evidence(h.event, "symptom", h.category))
    for s in secondary:
        evidence += [_evidence(e, "secondary", s.category) for e in s.events[:1]]
    leads = verdict_leads(att.leads, evidence)
    if leads and domain == "unknown":
        notes.append(f"The evidence points at (a lead, not a cause): {leads[0].summary}.")

    affected: list[str] = []
    for f in [root] if root else candidates:
        for node in f.nodes:
            if node not in affected:
                affected.append(node)
    when = now or datetime.now(UTC)
    return Verdict(
        workload=workload,
        terminal_state=terminal_state,
        outcome=outcome,  # type: ignore[arg-type]
        attributed_domain=domain,  # type: ignore[arg-type]
        root_cause=_cause(root) if root else None,
        candidates=[_cause(c) for c in candidates],
        affected_nodes=sorted(affected),
        symptoms=_symptoms(att.symptoms),
        leads=leads,
        evidence=evidence,
        coverage=list(coverage),  # the verdict's own list: a connector may still append to the sink's
        errors=sorted(errors, key=lambda e: (e.source, e.file or "", e.line or 0, e.message)),
        catalog=CatalogRef(version=catalog.version, sha256=catalog.sha256),
        analyzed_at=iso(when) or "",
        secondary_causes=[_cause(s) for s in secondary],
        explanation=notes,
        unrecognized=list(unrecognized or []),
        provisional=provisional,
    )


def provisional_root(f: Finding, att: Attribution) -> str | None:
    """None when finding `f` may stand in a provisional verdict; else why not (spec.PROVISIONAL_*)."""
    if f.domain in PROVISIONAL_AT_ONCE and not f.weak:
        return None
    if f.domain == "scheduler":
        return f"{f.category}: the scheduler has not ended the attempt"
    confirmed = any(h.explained_by is f and any(category_matches(p, h.category) for p in PROVISIONAL_CONFIRM)
                    for h in att.symptoms)
    if confirmed:
        return None
    return f"{f.category}: not yet followed by {' or '.join(PROVISIONAL_CONFIRM)}"
