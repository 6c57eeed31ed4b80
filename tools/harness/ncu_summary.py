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
    """A kernel's name without its template arguments and parameters; each_kernel keeps its step,
    and a lane kernel's exact instance (its last template argument true) is named so."""
    m = re.search(r"each_kernel<(\w+)", name)
    if m:
        return "each_kernel<" + m.group(1) + ">"
    base = re.split(r"[<(]", re.sub(r"^void ", "", name.strip()), maxsplit=1)[0]
    if re.match(r"(chunk_hulls|lane_rows)_kernel$", base) and re.search(r",\s*true\s*>", name):
        base += "/exact"
    return base


def rows_of(path):
    """The page's rows, or None with a line that says why there are none."""
    try:
        with open(path, newline="", errors="replace") as f:
            rows = [r for r in csv.reader(f) if r]
    except (OSError, csv.Error) as e:
        print(f"INFO profile: {path}: {e}")
        return None
    if not rows:
        print(f"INFO profile: {path} is empty")
    return rows or None


def first_columns(names):
    """Each column name's first index (a page may repeat a name)."""
    col = {}
    for i, n in enumerate(names):
        col.setdefault(n.strip().lstrip("# "), i)
    return col


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
    col = first_columns(names)
    time_col = col.get("gpu__time_duration.sum")
    scale = ms_factor(units[time_col]) if time_col is not None and time_col < len(units) else None
    if scale is None:
        scale = 1e-6  # nanoseconds, ncu's base unit
    kernels = {}
    for r in rows[head + 1:]:
        if time_col is None or len(r) != len(names) or number(r[time_col]) is None:
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
            parts.append(f"{inst:.3g} inst")
        for label, n, fmt in (("IPC", "sm__inst_executed.avg.per_cycle_active", "{:.2f}"),
                              ("issue", "smsp__issue_active.avg.pct_of_peak_sustained_active", "{:.0f}%"),
                              ("occ", "sm__warps_active.avg.pct_of_peak_sustained_active", "{:.0f}%"),
                              ("regs", "launch__registers_per_thread", "{:.0f}"),
                              ("L1 hits", "l1tex__t_sector_hit_rate.pct", "{:.0f}%")):
            v = rate(n)
            if v is not None:
                parts.append(label + " " + fmt.format(v))
        stalls = []
        for n in k["rate"]:
            m = re.match(r"smsp__average_warps?_issue_stalled_(\w+?)_per_issue_active\.ratio$", n)
            if m and m.group(1) != "selected":  # a warp issuing: about 1 always
                stalls.append((rate(n), m.group(1)))
        if stalls:
            parts.append("stalls " + " ".join(f"{s} {v:.2f}" for v, s in sorted(stalls, reverse=True)[:5]))
        pipes = []
        for n in k["rate"]:
            m = re.match(r"sm__(inst_executed_)?pipe_(\w+?)(_cycles_active)?"
                         r"\.avg\.pct_of_peak_sustained_(active|elapsed)$", n)
            if m:  # the instructions issued to a pipe, or its cycles busy
                pipes.append((rate(n), m.group(2) + (" cycles" if m.group(3) else "")))
        if pipes:
            parts.append("pipes " + " ".join(f"{p} {v:.0f}%" for v, p in sorted(pipes, reverse=True)[:3]))
        print(f"INFO profile {name}: " + ", ".join(parts))


def opcode(sass):
    text = re.sub(r"^\s*@!?U?P\w+\s+", "", sass.strip())
    return re.split(r"[\s.]", text, maxsplit=1)[0] if text else "?"


def read_sass(path):
    """The functions of `nvdisasm -g` output: each its name and, in order, its instructions' opcodes
    and source lines (the last `//## File "F", line N` before each; "?" where none came)."""
    try:
        with open(path) as f:
            text = f.read().splitlines()
    except OSError:
        return []
    functions, where = [], "?"
    for line in text:
        m = re.match(r"\s*\.text\.(\S+?):", line)
        if m:
            functions.append({"name": m.group(1), "ops": [], "lines": []})
            where = "?"
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', line)
        if m:
            where = m.group(1).rsplit("/", 1)[-1] + ":" + m.group(2)
            continue
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if m and functions:
            functions[-1]["ops"].append(opcode(m.group(1)))
            functions[-1]["lines"].append(where)
    return functions


def matching_function(ops, functions):
    """The function of the SASS whose instructions are the block's: its opcodes the same, in order,
    at the most places, among those of the block's length; None where none is."""
    best, score = None, 0
    for f in functions:
        if len(f["ops"]) != len(ops):
            continue
        same = sum(a == b for a, b in zip(f["ops"], ops))
        if same > score:
            best, score = f, same
    return best if best is not None and score >= 0.9 * len(ops) else None


def source_lines(block, executed, samples, functions):
    """The block's executed instructions and stall samples by source line, where its function is
    found in the SASS (the rows in address order, as nvdisasm lists them)."""
    col = block["col"]
    def address(r):
        a = r[col["Address"]].strip().lower()
        return int(a, 16) if re.match(r"(0x)?[0-9a-f]+$", a) else 0

    rows = sorted(block["rows"], key=address)
    f = matching_function([opcode(r[col["Source"]]) for r in rows], functions)
    if f is None:
        return None
    by_line = {}
    for r, where in zip(rows, f["lines"]):
        e, st = by_line.get(where, (0.0, 0.0))
        stalled = (number(r[samples]) or 0.0) if samples is not None else 0.0
        by_line[where] = (e + (number(r[executed]) or 0.0), st + stalled)
    return by_line


def summarize_source(rows, functions):
    blocks, current, title = [], None, ""
    for r in rows:
        col = first_columns(r)
        if r[0].strip() == "Kernel Name":  # a block's kernel ("Kernel Name","void ...",)
            title = r[1] if len(r) > 1 else ""
        elif "Address" in col and "Source" in col:
            current = {"title": title, "col": col, "width": len(r), "rows": []}
            blocks.append(current)
        elif current is not None and len(r) == current["width"]:
            current["rows"].append(r)
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
        by_line = source_lines(block, executed, samples, functions) if functions else None
        if by_line:
            top = sorted(by_line.items(), key=lambda kv: -kv[1][0])[:20]
            print(f"INFO profile sass {b} lines: " + ", ".join(
                f"{where} {100 * e / total:.1f}%/{100 * st / total_stalled:.1f}%" for where, (e, st) in top)
                + " (executed / stall samples)")
        elif functions:
            print(f"INFO profile sass {b} lines: no function of the SASS has this kernel's instructions")


def main():
    if len(sys.argv) not in (3, 4):
        print("usage: ncu_summary.py RAW_CSV SOURCE_CSV [SASS]", file=sys.stderr)
        return 64
    for page, summarize in ((sys.argv[1], summarize_raw), (sys.argv[2], summarize_source)):
        rows = rows_of(page)
        try:  # a layout this script did not foresee costs that page's lines, with the reason
            if rows and summarize is summarize_raw:
                summarize_raw(rows)
            elif rows:
                summarize_source(rows, read_sass(sys.argv[3]) if len(sys.argv) == 4 else [])
        except Exception as e:  # noqa: BLE001
            print(f"INFO profile: {page}: the summary stopped: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
