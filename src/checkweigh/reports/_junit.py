"""JUnit XML for CI: one testcase per case execution, a failure listing the failed checks with
their reasons, and a second testsuite with the run's gates."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from ..core import CaseResult, CaseState, PassPolicy, RunSummary, VerdictState
from ._calibration import gate_text
from ._files import replaced_at
from ._safe import clean


def _clean(text: str) -> str:
    # XML 1.0 cannot carry most control characters, even escaped, nor lone surrogates; CI pages
    # show this text to people: every control character is shown escaped, lines are kept
    return clean(text, lines=True)


def _check_lines(result: CaseResult) -> list[str]:
    """Every failed or errored check once, with its reason."""
    lines: list[str] = []
    for name, v in result.verdicts.items():
        if v.state is VerdictState.FAILED:
            lines.append(f"- {name}: {v.reason}")
        elif v.state is VerdictState.ERRORED:
            lines.append(f"- {name} (errored): {v.error or v.reason}")
    return lines


def _scores(result: CaseResult) -> str:
    return "\n".join(r.explanation for r in result.results.values())


def _testcase(suite: str, result: CaseResult, policy: PassPolicy, repeats: bool) -> ET.Element:
    verdict = policy.decide(result)
    name = f"{result.case_id} #{result.repeat}" if repeats else result.case_id
    seconds = (result.latency_ms or 0.0) / 1000.0
    case = ET.Element(
        "testcase", {"name": _clean(name), "classname": _clean(suite), "time": f"{seconds:.3f}"}
    )
    if verdict.state is not CaseState.PASSED:
        tag = "error" if verdict.state is CaseState.ERRORED else "failure"
        body = [verdict.reason, *_check_lines(result)]
        if result.results:
            body += ["", _scores(result)]
        node = ET.SubElement(
            case, tag, {"message": _clean(verdict.reason), "type": f"case {verdict.state.value}"}
        )
        node.text = _clean("\n".join(body))
    else:
        out = ET.SubElement(case, "system-out")
        out.text = _clean(f"{verdict.reason}\n{_scores(result)}")
    return case


def _gates_suite(suite: str, summary: RunSummary) -> ET.Element:
    # (name, passed, text, why it is not decided: None when it is)
    rows: list[tuple[str, bool, str, str | None]] = []
    g = summary.case_gates
    dims = summary.case_gates_undecided
    if g is not None:
        metrics = g.weighted_metrics_score_pct
        shown = "unmeasured" if metrics is None else f"{metrics:.1f}%"
        rows.append(
            (
                "metrics",
                g.metrics_passed,
                f"mean case score {shown}, threshold {g.metrics_pass_threshold:g}%",
                dims,
            )
        )
        rows.append(
            (
                "cases",
                g.cases_passed,
                f"pass rate {g.cases_pass_rate_pct:.1f}% ({g.passed} of {g.executions}), "
                f"threshold {g.cases_pass_threshold:g}%",
                dims,
            )
        )
    for gate in summary.gates:
        text = f"{gate.gate} (actual {gate_text(gate)})"
        rows.append((gate.gate, gate.passed, text, None if gate.decided else gate.needs))
    run_wide = summary.gates_not_decided
    if run_wide is not None:  # measured on the finished part only: neither pass nor fail
        rows = [(name, ok, text, run_wide) for name, ok, text, _ in rows]
    skipped = sum(why is not None for *_, why in rows)
    node = ET.Element(
        "testsuite",
        {
            "name": _clean(f"{suite} gates"),
            "tests": str(len(rows)),
            "failures": str(sum(not ok and why is None for _, ok, _, why in rows)),
            "errors": "0",
            "skipped": str(skipped),
            "time": "0",
        },
    )
    for name, ok, text, why in rows:
        case = ET.SubElement(
            node,
            "testcase",
            {"name": _clean(f"gate: {name}"), "classname": _clean(f"{suite}.gates"), "time": "0"},
        )
        if why is not None:
            ET.SubElement(case, "skipped", {"message": _clean(f"not decided: {why}")})
            ET.SubElement(case, "system-out").text = _clean(text)
        elif ok:
            ET.SubElement(case, "system-out").text = _clean(text)
        else:
            ET.SubElement(case, "failure", {"message": _clean(text), "type": "gate failed"})
    return node


def write_junit(
    path: Path,
    *,
    suite: str,
    run_id: str,
    policy: PassPolicy,
    summary: RunSummary,
    results: Iterable[CaseResult],
    repeats: bool = False,
) -> int:
    """Write the report; returns how many case testcases it holds."""
    cases = ET.Element(
        "testsuite",
        {"name": _clean(suite), "tests": "0", "failures": "0", "errors": "0", "skipped": "0"},
    )
    props = ET.SubElement(cases, "properties")
    for key, value in (
        ("run_id", run_id),
        ("pass_policy", policy.pass_policy.value),
        ("pass_threshold", f"{policy.pass_threshold:g}"),
        ("metrics_pass_threshold", f"{policy.metrics_pass_threshold:g}"),
        ("cases_pass_threshold", f"{policy.cases_pass_threshold:g}"),
    ):
        ET.SubElement(props, "property", {"name": key, "value": _clean(value)})
    n = failures = errors = 0
    total_time = 0.0
    for result in results:
        case = _testcase(suite, result, policy, repeats)
        cases.append(case)
        n += 1
        failures += case.find("failure") is not None
        errors += case.find("error") is not None
        total_time += (result.latency_ms or 0.0) / 1000.0
    cases.set("tests", str(n))
    cases.set("failures", str(failures))
    cases.set("errors", str(errors))
    cases.set("time", f"{total_time:.3f}")
    gates = _gates_suite(suite, summary)
    root = ET.Element(
        "testsuites",
        {
            "name": "checkweigh",
            "tests": str(n + int(gates.get("tests", "0"))),
            "failures": str(failures + int(gates.get("failures", "0"))),
            "errors": str(errors),
            "time": f"{total_time:.3f}",
        },
    )
    root.append(cases)
    root.append(gates)
    ET.indent(root)
    with replaced_at(path) as part:
        ET.ElementTree(root).write(part, encoding="utf-8", xml_declaration=True)
    return n
