"""The console lines of a run's interleaving coverage (the ``coverage`` section of
report.json, :mod:`harness.coverage`): how much overlapped, the weakest pairs, and the
pairs that never overlapped."""

from __future__ import annotations

from typing import Any

__all__ = ["coverage_lines", "window_lines"]

WEAKEST = 3  # pairs named as the weakest
NAMED = 4  # never-overlapped pairs named by name after the first one's sentence


def coverage_lines(cov: dict[str, Any] | None) -> list[str]:
    """One or two rich-markup lines: the overlaps and the weakest pairs; then, if some
    pair never overlapped, the most telling one's sentence and the names of the others."""
    if not cov:
        return []
    pairs = {p: n for p, n in cov["pairs"].items() if n > 0}
    weakest = sorted(pairs.items(), key=lambda pn: (pn[1], pn[0]))[:WEAKEST]
    head = (f"coverage: {cov['overlaps']} overlaps of ops on one session, "
            f"{len(pairs)} of {len(cov['pairs'])} pairs of op kinds")
    if weakest:
        head += "; fewest: " + ", ".join(f"{p} {n}" for p, n in weakest)
    out = [head]
    never = cov["never"]
    if never:
        more = [n["pair"] for n in never[1:]]
        rest = ", ".join(more[:NAMED]) + (f" and {len(more) - NAMED} more" if len(more) > NAMED
                                          else "")
        out.append(f"[yellow]never overlapped[/]: {never[0]['sentence']}"
                   + (f"; also never: {rest}" if rest else ""))
    return out


def window_lines(control: dict[str, Any] | None) -> list[str]:
    """A controlled run's command windows (:mod:`harness.runner.control.windows`): how many
    multi-command ops had another op of their session run inside, and the most frequent
    pairs."""
    win = (control or {}).get("windows")
    if not win:
        return []
    top = sorted(win["pairs"].items(), key=lambda pn: (-pn[1], pn[0]))[:WEAKEST]
    line = (f"command windows: {win['entered']} of {win['multi_command_ops']} multi-command ops "
            "had another op of their session run inside")
    return [line + (": " + ", ".join(f"{p} {n}" for p, n in top) if top else "")]
