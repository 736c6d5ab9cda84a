"""Summarise Nsight Compute CSV output in a few lines (for profiles run on a remote GPU).

    ncu --csv --page raw --metrics ... python3 ... > raw.csv
    python3 bench/ncu_stalls.py raw raw.csv            # per kernel: the metrics, stalls sorted
    ncu -i rep.ncu-rep --page source --csv --print-source sass > src.csv
    python3 bench/ncu_stalls.py source src.csv         # the SASS lines with most stall samples

Only the standard library; tolerant of ncu's preamble lines (``==PROF==``) and of columns it
does not have.
"""

from __future__ import annotations

import csv
import io
import sys


def _rows(path: str) -> list[list[str]]:
    text = open(path, errors="replace").read()
    lines = [line for line in text.splitlines() if line.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def raw(path: str, top: int = 10) -> None:
    """One block per kernel row: plain metrics, then the stall ratios, largest first."""
    rows = _rows(path)
    if len(rows) < 3:
        print(f"{path}: no CSV rows ({len(rows)})")
        return
    header, body = rows[0], rows[2:]  # rows[1]: units
    for row in body:
        cells = dict(zip(header, row))
        print(f"kernel {cells.get('Kernel Name', '?')} (id {cells.get('ID', '?')})")
        stalls = []
        for name, value in cells.items():
            number = _number(value)
            if number is None:
                continue
            if "issue_stalled" in name:
                stalls.append((number, name))
            elif "__" in name:
                print(f"  {name} = {value}")
        stalls.sort(reverse=True)
        total = sum(x for x, _ in stalls) or 1.0
        for number, name in stalls[:top]:
            short = name.replace("smsp__average_warps_issue_stalled_", "").replace(
                "_per_issue_active.ratio", "")
            print(f"  stall {short:24s} {number:9.2f} ({100 * number / total:4.1f} %)")


def source(path: str, top: int = 25) -> None:
    """The SASS instructions with the most warp-stall samples, with their share."""
    rows = _rows(path)
    if len(rows) < 2:
        print(f"{path}: no CSV rows")
        return
    header = rows[0]
    print("columns:", "; ".join(header)[:600])
    sample_col = next((i for i, h in enumerate(header) if "Sampling (All" in h), None)
    text_col = next((i for i, h in enumerate(header) if h.strip() in ("Source", "Sass")), 1)
    if sample_col is None:
        return
    stall_cols = [i for i, h in enumerate(header) if h.startswith("stall_") or "Stall" in h
                  and i != sample_col and "Sampling" not in h]
    body = [r for r in rows[1:] if len(r) > sample_col and _number(r[sample_col]) is not None]
    total = sum(_number(r[sample_col]) for r in body) or 1.0
    body.sort(key=lambda r: -_number(r[sample_col]))
    for r in body[:top]:
        count = _number(r[sample_col])
        reasons = sorted(((_number(r[i]) or 0.0, header[i]) for i in stall_cols if i < len(r)),
                         reverse=True)[:2]
        why = ", ".join(f"{h}={v:.0f}" for v, h in reasons if v > 0)
        print(f"{100 * count / total:5.1f} % {r[0][:10]:10s} {r[text_col][:70]:70s} {why}")


if __name__ == "__main__":
    {"raw": raw, "source": source}[sys.argv[1]](sys.argv[2])
