#!/usr/bin/env python3
"""tools/gpu-check's section profile: a summary of Nsight Compute's pages of one report, as
"INFO profile ..." lines for the log.

  ncu_summary.py RAW_CSV SOURCE_CSV

RAW_CSV is `ncu --import R --page raw --csv` (a header row of metric names, a row of units, a row
a launch); each kernel gets one line, its launches summed (times, instructions) or averaged
weighted by time (rates, percentages): its time, warp instructions, instructions an SM issued a
cycle, issue slots busy, achieved occupancy, registers, and its largest stall reasons (warps
stalled a cycle of issue) and pipes. SOURCE_CSV is `--page source --csv --print-source sass` (a
row a SASS instruction with its address, a block a kernel); each block gets a line of the shares
of its executed instructions and of its stall samples by opcode. A page that is missing or that
reads as neither gives a line that says so: the lines are for a person, the CSV files travel
beside them (profile.tar.gz) for the analysis that needs the addresses.
"""
import csv
import re
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def short(name):
    """A kernel's name without its template arguments and parameters (each_kernel<merge_step<float>>
    keeps its step)."""
    m = re.search(r"each_kernel<(\w+)", name)
    if m:
        return "each_kernel<" + m.group(1) + ">"
    name = re.sub(r"^void ", "", name)
    return re.split(r"[<(]", name, maxsplit=1)[0]


def rows_of(path):
    try:
        with open(path, newline="") as f:
            return [r for r in csv.reader(f) if r]
    except OSError as e:
        print(f"INFO profile: {path}: {e.strerror}")
        return None


def ms_factor(unit):
    return {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
            "second": 1e3, "s": 1e3}.get(unit.strip(), None)


def summarize_raw(rows):
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if head is None:
        print("INFO profile raw page: no header row with 'Kernel Name' (ncu's message: "
              + " ".join(" ".join(r) for r in rows[:2])[:200] + ")")
        return
    names, units = rows[head], rows[head + 1] if head + 1 < len(rows) else []
    col = {n: i for i, n in enumerate(names)}
    time_col = col.get("gpu__time_duration.sum")
    scale = ms_factor(units[time_col]) if time_col is not None and time_col < len(units) else None
    if scale is None:
        scale = 1e-6  # nanoseconds, ncu's base unit
    kernels = {}
    for r in rows[head + 1:]:
        if len(r) != len(names) or not r[col["Kernel Name"]] or number(r[time_col] if time_col is not None else "") is None:
            continue  # the units row, ncu's own lines
        k = kernels.setdefault(short(r[col["Kernel Name"]]), {"launches": 0, "ms": 0.0, "sum": {}, "rate": {}})
        ms = number(r[time_col]) * scale
        k["launches"] += 1
        k["ms"] += ms
        for n, i in col.items():
            v = number(r[i])
            if v is None:
                continue
            if n.endswith(".sum"):
                k["sum"][n] = k["sum"].get(n, 0.0) + v
            elif n.startswith("launch__"):
                k["rate"][n] = v  # the last launch's (registers: the same for every launch)
            else:
                k["rate"][n] = k["rate"].get(n, 0.0) + v * ms
    if not kernels:
        print("INFO profile raw page: no kernel launch found")
        return
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["ms"]):
        ms = k["ms"] or 1e-30

        def rate(n):
            v = k["rate"].get(n)
            return None if v is None else (v if n.startswith("launch__") else v / ms)

        parts = [f"{k['ms']:.4f} ms" + (f" ({k['launches']} launches)" if k["launches"] > 1 else "")]
        inst = k["sum"].get("smsp__inst_executed.sum")
        if inst is not None:
            parts.append(f"{inst:.3g} warp instructions")
        for label, n, fmt in (("IPC", "sm__inst_executed.avg.per_cycle_active", "{:.2f}"),
                              ("issue busy", "smsp__issue_active.avg.pct_of_peak_sustained_active", "{:.0f}%"),
                              ("occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "{:.0f}%"),
                              ("registers", "launch__registers_per_thread", "{:.0f}"),
                              ("L1 hits", "l1tex__t_sector_hit_rate.pct", "{:.0f}%")):
            v = rate(n)
            if v is not None:
                parts.append(label + " " + fmt.format(v))
        stalls = []
        for n in k["rate"]:
            m = re.match(r"smsp__average_warps?_issue_stalled_(\w+?)_per_issue_active\.ratio$", n)
            if m:
                stalls.append((rate(n), m.group(1)))
        if stalls:
            parts.append("stalls " + " ".join(f"{s} {v:.2f}" for v, s in sorted(stalls, reverse=True)[:5]))
        pipes = []
        for n in k["rate"]:
            m = re.match(r"sm__(?:inst_executed_)?pipe_(\w+?)(?:_cycles_active)?\.avg\.pct_of_peak_sustained_active$", n)
            if m:
                pipes.append((rate(n), m.group(1)))
        if pipes:
            parts.append("pipes " + " ".join(f"{p} {v:.0f}%" for v, p in sorted(pipes, reverse=True)[:3]))
        print(f"INFO profile {name}: " + ", ".join(parts))


def opcode(sass):
    text = re.sub(r"^\s*@!?U?P\w+\s+", "", sass.strip())
    return re.split(r"[\s.]", text, maxsplit=1)[0] if text else "?"


def summarize_source(rows):
    blocks, current, title = [], None, ""
    for r in rows:
        if "Address" in r and "Source" in r:
            current = {"title": title, "col": {n: i for i, n in enumerate(r)}, "rows": []}
            blocks.append(current)
        elif current is not None and len(r) == len(current["col"]):
            current["rows"].append(r)
        elif len(r) <= 2:
            title = r[-1]  # a block's kernel, where the page names it
    if not blocks:
        print("INFO profile source page: no header row with 'Address' and 'Source' (ncu's message: "
              + " ".join(" ".join(r) for r in rows[:2])[:200] + ")")
        return
    for b, block in enumerate(blocks):
        col = block["col"]
        executed = col.get("Instructions Executed")
        samples = next((i for n, i in col.items() if n.startswith("Warp Stall Sampling (All")), None)
        if executed is None:
            print(f"INFO profile sass {b}: no 'Instructions Executed' column")
            continue
        by_op, stalled = {}, {}
        for r in block["rows"]:
            op = opcode(r[col["Source"]])
            by_op[op] = by_op.get(op, 0.0) + (number(r[executed]) or 0.0)
            if samples is not None:
                stalled[op] = stalled.get(op, 0.0) + (number(r[samples]) or 0.0)
        total, total_stalled = sum(by_op.values()) or 1.0, sum(stalled.values()) or 1.0
        top = " ".join(f"{op} {100 * v / total:.0f}%" for op, v in sorted(by_op.items(), key=lambda kv: -kv[1])[:10])
        line = f"INFO profile sass {b} {short(block['title'])[:40]}: {total:.3g} executed: {top}"
        if samples is not None:
            line += "; stall samples: " + " ".join(
                f"{op} {100 * v / total_stalled:.0f}%" for op, v in sorted(stalled.items(), key=lambda kv: -kv[1])[:8])
        print(line)


def main():
    if len(sys.argv) != 3:
        print("usage: ncu_summary.py RAW_CSV SOURCE_CSV", file=sys.stderr)
        return 64
    raw = rows_of(sys.argv[1])
    if raw:
        summarize_raw(raw)
    source = rows_of(sys.argv[2])
    if source:
        summarize_source(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
