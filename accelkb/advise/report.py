"""Render an :class:`~accelkb.advise.advice.Advice` as Markdown, self-contained HTML, or JSON.

The renderers only format data already in the advice; they compute nothing.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from accelkb.advise.advice import AT_TDP, Advice, Estimate
from accelkb.advise.costs import like_for_like
from accelkb.advise.figures import figures
from accelkb.advise.figures import label as label_of
from accelkb.advise.network.render import network_sections
from accelkb.errors import InputError

FORMATS = ("md", "html", "json")


def _t(seconds: float | None, phase: str) -> str:
    if seconds is None or seconds != seconds:
        return "n/a"
    if phase == "training" or seconds >= 1:
        return f"{seconds:.3g} s"
    return f"{seconds * 1e3:.3g} ms"


def _range(e: Estimate, key: str, phase: str | None = None) -> str:
    """' (range 2.77 ms-12 ms)' of a time (``phase`` given) or a rate, or ''."""
    r = e.ranges.get(key)
    if r is None:
        return ""
    if phase is None:
        return f" (range {r.low:,.3g}-{r.high:,.3g})"
    return f" (range {_t(r.low, phase)} to {_t(r.high, phase)})"


def _layout(e: Estimate) -> str:
    """'tp=8, pp=41' (and dp, batch where they are not 1)."""
    c = e.configuration
    parts = [f"{k}={c[k]}" for k in ("tp", "pp", "dp", "batch") if k in c and
             (k in ("tp", "pp") or (c[k] or 1) != 1)]
    if c.get("pipelined"):
        parts.append(f"pipelined: {_in_flight(c)} in flight")
    return ", ".join(parts)


def _in_flight(c: dict[str, Any]) -> int:
    """Sequences an inference layout serves at once: its batch, on every pipeline stage where
    the stages work on different batches (``pipelined``)."""
    return int(c.get("batch", 1)) * (int(c.get("pp", 1)) if c.get("pipelined") else 1)


def _mem(e: Estimate | None) -> str:
    if e is None:
        return ""
    text = ", ".join(f"{k} {v / 1e9:.3g} GB" for k, v in e.memory_per_chip_bytes.items())
    if e.layer_working_set_bytes and e.sram_bytes:
        text += (f"; one layer's working set {e.layer_working_set_bytes / 1e9:.3g} of "
                 f"{e.sram_bytes / 1e9:.3g} GB SRAM")
    return text


def _tree_item(line: str) -> str:
    """A derivation line (two spaces of indent per level, premises marked '- ') as a nested
    Markdown list item."""
    text = line.lstrip(" ")
    depth = (len(line) - len(text)) // 2
    return "  " * depth + "- " + text.removeprefix("- ")


def _derivation_items(lines: list[str]) -> list[str]:
    """The derivation as nested list items; a line citing the same sources as the line before
    says so instead of repeating the numbers.

    >>> _derivation_items(["a  [1, 2]", "  - b  [1, 2]", "  - c  [3]"])
    ['- a  [1, 2]', '  - b  [same sources as above]', '  - c  [3]']
    """
    out, previous = [], None
    for line in lines:
        m = re.search(r"  \[(\d+(?:, \d+)*)\]$", line)
        cited = m.group(1) if m else None
        if m and cited == previous:
            line = line[:m.start()] + "  [same sources as above]"
        previous = cited
        out.append(_tree_item(line))
    return out


def markdown(a: Advice, with_figures: bool = False) -> str:
    """The report as Markdown (``with_figures`` embeds the SVGs inline, for HTML conversion)."""
    L: list[str] = [f"# {a.question}", "",
                    f"*System* `{a.system}` ({a.chips} chips) · *workload* `{a.workload}` · "
                    f"*goal* {a.goal}", "", "## Answer", "", a.answer, ""]
    b = a.baseline
    L += ["## Baseline", "", a.baseline_note + ".", "",
          *([f"Reproduce: `{a.baseline_command}`", ""] if a.baseline_command else []),
          "| metric | value |", "|---|---|",
          f"| {'step time' if a.phase == 'training' else 'decode time per token'} | "
          f"{_t(b.time_s, a.phase)}{_range(b, 'time_s', a.phase)} |",
          f"| tokens/s (aggregate) | {b.tokens_per_s:,.0f} |"]
    if b.tokens_per_s_per_user is not None:
        L.append(f"| tokens/s per user | {b.tokens_per_s_per_user:,.1f}"
                 f"{_range(b, 'tokens_per_s_per_user')} |")
    if b.ttft_s is not None:
        L.append(f"| time to first token | {_t(b.ttft_s, 'inference')}"
                 f"{_range(b, 'ttft_s', 'inference')} |")
    L.append(f"| MFU | {100 * b.mfu:.2g} % |")  # decode on 576 chips: 0.0063 %, not "0.0 %"
    L.append(f"| memory per chip | {_mem(b)} |")
    if b.joules_per_token is not None:
        L.append(f"| energy | {b.joules_per_token:.3g} J/token at {b.power_w or 0:,.0f} W |")
    if b.time_to_train_s:
        L.append(f"| time to train the workload's tokens | {b.time_to_train_s / 86400:.1f} days |")
    L.append("")
    bases = list(dict.fromkeys(r.basis for r in b.ranges.values()))
    if bases:
        L += ["Ranges: " + "; ".join(bases) + ".", ""]
    figs = figures(a) if with_figures else {}
    if "breakdown" in figs:
        L += [figs["breakdown"], ""]
    if "memory" in figs:
        L += [figs["memory"], ""]
    L += ["## Bottlenecks", ""]
    if not a.findings:
        L += ["No bottleneck above the threshold.", ""]
    for f in a.findings:
        share = f" — {100 * f.share_of_time:.0f} % of the time" if f.share_of_time else ""
        L += [f"### {f.label}{share}", "", f"Evidence: {f.evidence}", "", "Derivation:", ""]
        L += _derivation_items(f.derivation) + [""]
    L += ["## Recommendations (ranked by checked gain)", ""]
    if b.sram_bytes:
        L += [f"{a.system}'s chips compute only from SRAM, so every layout below is checked "
              "to hold one layer's backward pass in SRAM at once: its weights, gradients and "
              "one micro-batch's activations (Korthikanti et al. 2022, eq. 2). Code and "
              "exchange buffers come on top, so the check is necessary, not sufficient; a "
              "change that fails it is blocked with its bytes.", ""]
    L += ["| # | optimization | status | speed-up | before | after | memory per chip after |",
          "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(a.recommendations, 1):
        sp = f"{r.speedup:.3f}x" if r.speedup else ""
        L.append(f"| {i} | {r.label} | {r.status} | {sp} | "
                 f"{_t(r.before.time_s, a.phase) if r.before else ''} | "
                 f"{_t(r.after.time_s, a.phase) if r.after else ''} | {_mem(r.after)} |")
    L.append("")
    for i, r in enumerate(a.recommendations, 1):
        L += [f"**{i}. {r.label}** (`{r.optimization}`"
              + (f", mitigates {', '.join(r.mitigates)}" if r.mitigates else "")
              + f"): {r.status}."]
        if r.configuration_change:
            L.append(f"Change: `{', '.join(f'{k}={v}' for k, v in r.configuration_change.items())}`.")
        if r.vendor_form:
            L.append(f"On these chips: {r.vendor_form}.")
        if r.command:
            L.append(f"Reproduce: `{r.command}`.")
        if r.blocked_by:
            L.append(f"Blocked by: {r.blocked_by}.")
        if r.solver_check:
            L.append(f"Solver: {r.solver_check}.")
        if r.requires:
            L.append(f"Requires: {'; '.join(r.requires)}.")
        if r.costs:
            L.append(f"Costs and risks: {'; '.join(r.costs)}.")
        if r.published_effect:
            L.append(f"Published effect: {r.published_effect}.")
        if r.derivation:
            L.append("Why: " + " → ".join(r.derivation))
        L.append("")
    L += _plan_section(a)
    L += ["## Hardware and architecture what-ifs", "",
          "| lever | changed fact | time | speed-up | note |", "|---|---|---|---|---|"]
    for w in a.what_ifs:
        sp = f"{w.speedup:.3f}x" if w.speedup is not None else "n/a"
        t = _t(w.time_s, a.phase) if w.time_s is not None else "n/a"
        L.append(f"| {w.lever} | {w.change} | {t} | {sp} | {w.note} |")
    L.append("")
    if a.comparisons:
        L += ["## Comparison on the same workload", "",
              "Each system at the best layout found by the same search (the layout grid, then "
              "for a time, latency or throughput goal in inference the Z3 configuration solver "
              "over every precision the chip supports; for a cost or energy goal the batch "
              "and layout that serve cheapest, at the workload's precision where the weights "
              "fit, else the narrowest the chip computes in), at the same sequence lengths. "
              "Rows may therefore differ in precision: the column says which each runs at. "
              "Times carry their ranges; tokens/s per W counts, for inference, each request's "
              "prefill with its generated tokens, as the cost table does.", "",
              "| system | chips used | layout | precision | time | tokens/s | tokens/s per W | "
              "note |", "|---|---|---|---|---|---|---|---|"]
        for c in a.comparisons:
            note = "; ".join(x for x in (c.scaled, c.error) if x)
            if c.estimate is None:
                L.append(f"| {c.system} | {c.chips} | | | | | | {note} |")
                continue
            pw = f"{c.tokens_per_s_per_watt:.3g}" if c.tokens_per_s_per_watt else "n/a"
            L.append(f"| {c.system} | {c.estimate.chips} | {_layout(c.estimate)} | "
                     f"{c.estimate.configuration.get('precision', '')} | "
                     f"{_t(c.estimate.time_s, a.phase)}{_range(c.estimate, 'time_s', a.phase)} | "
                     f"{c.estimate.tokens_per_s:,.0f} | "
                     f"{pw} | {note} |")
        own = a.baseline_tokens_per_s_per_watt
        base_pw = f"{own:.3g}" if own else "n/a"
        L += [f"| **{a.system}** (this system) | {b.chips} | {_layout(b)} | "
              f"{b.configuration.get('precision', '')} | {_t(b.time_s, a.phase)}"
              f"{_range(b, 'time_s', a.phase)} | "
              f"{b.tokens_per_s:,.0f} | {base_pw} | |", ""]
        if a.per_watt_basis:
            L += [f"Per watt: {a.per_watt_basis}.", ""]
    L += _sizes_section(a)
    L += _workloads_section(a)
    L += _cost_section(a)
    L += ["## Scaling over chip count", "", "| chips | time | tokens/s | tokens/s per user | note |",
          "|---|---|---|---|---|"]
    for p in a.scaling:
        per_user = f"{p.tokens_per_s_per_user:,.1f}" if p.tokens_per_s_per_user else ""
        L.append(f"| {p.chips} | {_t(p.time_s, a.phase)} | "
                 f"{'' if p.tokens_per_s is None else f'{p.tokens_per_s:,.0f}'} | {per_user} | {p.note} |")
    L.append("")
    if "scaling" in figs:
        L += [figs["scaling"], ""]
    if a.schedules:
        L += ["## Network schedules", "",
              "| topology | collective | status | steps | bound | dynamic routing |",
              "|---|---|---|---|---|---|"]
        for s in a.schedules:
            L.append(f"| {s.topology} | {s.collective} | {s.status} | {s.makespan_steps} | "
                     f"{s.lower_bound_steps} | {s.dynamic_makespan_steps} |")
        L.append("")
        L += [v for k, v in figs.items() if k.startswith("schedule-")]
    L += network_sections(a)
    if a.measured:
        L += ["## Published results for comparison", ""] + [f"- {m}" for m in a.measured] + [""]
    L += ["## Assumptions and confidence", ""] + [f"- {x}" for x in a.assumptions] + [""]
    L += ["## Facts used", "", "| subject | property | value | confidence | source |",
          "|---|---|---|---|---|"]
    numbers = {src.iri: i for i, src in enumerate(a.sources, 1)}
    for fact in a.facts:
        v = f"{fact.value:.6g}" if isinstance(fact.value, float) else fact.value
        ref = f"[{numbers[fact.source]}]" if fact.source in numbers else \
            fact.source.rsplit("/", 1)[-1]
        L.append(f"| {fact.subject} | {fact.property} | {v} | {fact.confidence} | {ref} |")
    L += ["", "## Sources", "", "Cited above by number: [n] or [n, where in the source].", ""]
    for i, src in enumerate(a.sources, 1):
        url = f" <{src.url}>" if src.url else ""
        L.append(f"- [{i}] {src.title} — {src.publisher} ({src.kind}){url} "
                 f"(`{src.iri.rsplit('/', 1)[-1]}`)")
    L += ["", f"*Produced by accelkb in {a.seconds:.1f} s (schema {a.schema_version}).*", ""]
    return "\n".join(L)


def _md_to_html(md: str) -> str:
    """Just enough Markdown for our own reports: headings, tables, lists, paragraphs, inline SVG."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0

    def inline(text: str) -> str:
        t = html.escape(text)
        t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
        t = re.sub(r"\*(.+?)\*", r"<em>\1</em>", t)
        t = re.sub(r"`(.+?)`", r"<code>\1</code>", t)
        return re.sub(r"&lt;(https?://[^&]+)&gt;", r'<a href="\1">\1</a>', t)

    while i < len(lines):
        line = lines[i]
        if line.startswith("<svg"):  # our own figures: the whole element, over its lines
            figure = [line]
            while "</svg>" not in figure[-1] and i + 1 < len(lines):
                i += 1
                figure.append(lines[i])
            out.append("<figure>" + "\n".join(figure) + "</figure>")
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{inline(line[level:].strip())}</h{level}>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            head, body = rows[0], [r for r in rows[2:]]
            out.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) +
                       "</tr></thead><tbody>" + "".join(
                           "<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body)
                       + "</tbody></table>")
            continue
        elif line.startswith("- "):  # a list, nested by two spaces per level
            html_list, depth = ["<ul>"], 0
            while i < len(lines) and (m := re.match(r"( *)- (.*)", lines[i])):
                level = min(len(m.group(1)) // 2, depth + 1)
                if level > depth:
                    html_list[-1] = html_list[-1].removesuffix("</li>")
                    html_list.append("<ul>")
                for _ in range(depth - level):
                    html_list.append("</ul></li>")
                depth = level
                html_list.append(f"<li>{inline(m.group(2))}</li>")
                i += 1
            html_list += ["</ul></li>"] * depth + ["</ul>"]
            out.append("".join(html_list))
            continue
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
        i += 1
    return "\n".join(out)


_CSS = ("body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.45}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
        "font-size:90%}th{background:#f3f3f3}code{background:#f6f6f6}figure{margin:1em 0}")


def html_report(a: Advice) -> str:
    """A self-contained HTML page with inline SVG figures."""
    body = _md_to_html(markdown(a, with_figures=True))
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(a.question)}</title><style>{_CSS}</style></head><body>{body}</body></html>\n")


def _sizes_section(a: Advice) -> list[str]:
    """The same system over model sizes: what it takes and what limits it."""
    if not a.sizes:
        return []
    L = ["## Model sizes", "",
         f"Each model trained on {a.system} at the same global batch, at its best fitting "
         "layout. The hardware lever is the what-if that buys most at that size; the software "
         "lever is the catalogued layout change that buys most, applied alone to that layout.",
         "",
         "| model | parameters | step | tokens/s | MFU | tokens/J | largest share of the step | "
         "hardware lever that buys most | software lever that buys most | layout or why not |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for s in a.sizes:
        if not s.fits:
            L.append(f"| {s.model} | {s.parameters / 1e9:,.1f}B | | | | | | | | {s.note} |")
            continue
        tpj = f"{s.tokens_per_joule:.3g}" if s.tokens_per_joule else "n/a"
        lever = (f"{s.best_lever} ({s.best_lever_change}): {s.best_lever_speedup:.2f}x"
                 if s.best_lever_speedup else "") + (f"; then {s.next_lever}" if s.next_lever
                                                     else "")
        soft = (f"{s.software_lever} ({s.software_lever_change}): "
                f"{s.software_lever_speedup:.2f}x" if s.software_lever_speedup else
                "none gains > 0.5 %")
        L.append(f"| {s.model} | {s.parameters / 1e9:,.1f}B | {_t(s.step_s, 'training')} | "
                 f"{s.tokens_per_s or 0:,.0f} | {100 * (s.mfu or 0):.2g} % | {tpj} | "
                 f"{label_of(s.largest_share)} ({100 * (s.largest_share_fraction or 0):.0f} %) | "
                 f"{lever} | {soft} | {s.layout} |")
    return [*L, ""]


def _workloads_section(a: Advice) -> list[str]:
    """Other training workloads (e.g. vision models) on this system and the compared ones."""
    if not a.other_workloads:
        return []
    L = ["## Other workloads on the same systems", "",
         "Each workload at its own global batch and run length on every system, at the best "
         "layout the same search finds (the transformer layout grid; for a convolutional "
         "network the data-parallel micro-batches with and without recomputation). On a chip "
         "that computes only from SRAM every layout is checked to hold its working set in SRAM "
         "(a necessary check: code and exchange buffers come on top). Levers are re-estimated "
         f"on {a.system} only.", "",
         "| workload | system | chips | layout | samples/s | the run | $ per run | samples/J | "
         "working set | measured | levers that buy most |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in a.other_workloads:
        if not r.fits:
            L.append(f"| {r.workload} | {r.system} | {r.chips} | {r.note} | | | | | | | |")
            continue
        usd = (f"${r.usd_to_train:,.3g} (${r.usd_to_train_low or 0:,.3g}-"
               f"${r.usd_to_train_high or 0:,.3g})" if r.usd_to_train else "n/a")
        ws = (f"{r.working_set_bytes / 1e9:.3g} of {r.sram_bytes / 1e9:.3g} GB SRAM"
              if r.working_set_bytes and r.sram_bytes else
              f"{r.working_set_bytes / 1e9:.3g} GB" if r.working_set_bytes else "")
        spj = f"{r.samples_per_joule:.3g}" if r.samples_per_joule else "n/a"
        secs = r.time_to_train_s or 0.0
        run = f"{secs / 60:.3g} min" if secs < 5400 else f"{secs / 3600:.3g} h"
        L.append(f"| {r.workload} | {r.system} | {r.chips} | {r.layout} | "
                 f"{r.samples_per_s or 0:,.0f} | {run} | {usd} | {spj} | {ws} | "
                 f"{r.measured or 'none in the knowledge base'} | {'; '.join(r.levers)} |")
    return [*L, ""]


def _plan_section(a: Advice) -> list[str]:
    """The compatible recommendations applied together, with what is in and out."""
    p = a.plan
    if p is None or p.after is None:
        return []
    change = ", ".join(f"{k}={v}" for k, v in p.configuration_change.items())
    return ["## Combined plan", "",
            f"The recommended rows are each checked against the baseline, so their gains do not "
            f"multiply. Applied together as one layout ({p.solver_check}): "
            f"{_t(p.before.time_s if p.before else None, a.phase)} → "
            f"{_t(p.after.time_s, a.phase)}, **{p.speedup or 0:.3f}x**.", "",
            f"Change: `{change}`.", "", *([f"On these chips: {p.vendor_form}.", ""]
                                          if p.vendor_form else []),
            *([f"Reproduce: `{p.command}`.", ""] if p.command else []),
            "Includes:", "", *[f"- {x}" for x in p.includes], "",
            *(["Leaves out:", "", *[f"- {x}" for x in p.excludes], ""] if p.excludes else [])]


def _batches(a: Advice) -> str:
    """Inference: the batch each priced row runs at, since it sets the cost per token as much
    as the chips do (a batch-1 latency layout against another's batch 128 is not like for
    like); '' for training."""
    if a.phase == "training":
        return ""
    priced = {r.system for r in a.costs}
    runs = [(a.system, a.baseline)] + [(c.system, c.estimate) for c in a.comparisons
                                       if c.estimate is not None]
    batch = [(f"{name} x{est.chips}" if sum(n == name for n, _ in runs) > 1 else name,
              _in_flight(est.configuration)) for name, est in runs if name in priced]
    if not batch:
        return ""
    head = (f"each with {batch[0][1]} sequence{'s' * (batch[0][1] != 1)} in flight"
            if len({b for _, b in batch}) == 1
            else ", ".join(f"{name} with {b} in flight" for name, b in batch))
    tail = "" if a.goal == "cost" else "; a larger batch costs less per token: --goal cost " \
        "searches it"
    return f" ({head}{tail})"


def _cost_section(a: Advice) -> list[str]:
    """Dollars and kWh per million tokens of this system and each compared one."""
    if not a.costs:
        return []
    what = "trained" if a.phase == "training" else "generated"
    L = ["## Cost and energy", "",
         f"Per million {what} tokens at the layouts above{_batches(a)}. A cloud price includes "
         "energy and facility; a purchase price is amortised and its energy added. Ranges "
         "combine the price's (its confidence, or the providers' spread) with the estimate's "
         "own.", "",
         "| system | chips | $/hour | $ per M tokens | kWh per M tokens | tokens/J | "
         + ("$ per run | " if a.phase == "training" else "") + "basis |",
         "|---|---|---|---|---|---|" + ("---|" if a.phase == "training" else "") + "---|"]
    for i, r in enumerate(a.costs):
        name = f"**{r.system}** (this system)" if i == 0 else r.system
        kwh = f"{r.kwh_per_million_tokens:.3g}" if r.kwh_per_million_tokens else "n/a"
        tpj = f"{r.tokens_per_joule:.3g}" if r.tokens_per_joule else "n/a"
        run = ((f"${r.usd_to_train:,.0f} (${r.usd_to_train_low or 0:,.0f}-"
                f"${r.usd_to_train_high or 0:,.0f}) | " if r.usd_to_train else "n/a | ")
               if a.phase == "training" else "")
        if r.usd_per_million_tokens is None:
            L.append(f"| {name} | {r.chips} | | | {kwh} | {tpj} | "
                     + ("n/a | " if a.phase == "training" else "") + f"{r.note} |")
            continue
        hour = f"${r.usd_per_hour:,.2f}" if r.usd_per_hour is not None else "n/a"
        L.append(f"| {name} | {r.chips} | {hour} | "
                 f"${r.usd_per_million_tokens:,.3g} (${r.usd_low:,.3g}-${r.usd_high:,.3g}) | "
                 f"{kwh} | {tpj} | {run}{r.price} |")
    facilities = list(dict.fromkeys(r.facility for r in a.costs if r.facility))
    markets = [f"{r.system}: {r.market}." for r in a.costs if r.market]
    warning = like_for_like(a.costs)
    energy = ["kWh per million tokens includes the facility's PUE (the data centre's energy "
              "on top of the chips'); tokens/J is at the chips."]
    if a.per_watt_basis.startswith(AT_TDP):
        energy.append("Both are on each system's own full-power figure (a server's includes "
                      "its hosts and fans), what a data centre pays for; the comparison's "
                      "tokens/s per W puts every system on its chips' TDP instead, so the two "
                      "columns differ for a system whose figure is a whole server's.")
    elif a.per_watt_basis:
        energy.append("Both are on each system's own full-power figure, whose scope differs "
                      "here (see the comparison's per-watt note).")
    return [*L, "", " ".join(energy), "",
            *[f"Purchases are amortised with the {f}." for f in facilities],
            *([""] if facilities else []),
            *(["What users pay per token for this model on these chips:", "",
               *[f"- {m}" for m in markets], ""] if markets else []),
            *([f"**{warning}**", ""] if warning else []),
            *([f"The kind of price follows the systems compared: {a.costs[0].other_kind}.", ""]
              if a.costs[0].other_kind else [])]


def render(a: Advice, fmt: str) -> str:
    """Render as 'md', 'html' or 'json'."""
    if fmt == "md":
        return markdown(a)
    if fmt == "html":
        return html_report(a)
    if fmt == "json":
        return json.dumps(a.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"
    raise InputError(f"expected --format among {', '.join(FORMATS)}, got '{fmt}'")
