"""Provider prompt caching on the demo suite: hit rate and cost with caching on and off.

Usage: python benchmarks/bench_prompt_cache.py

The demo suites (``examples/scheduling/suite.yaml``, what ``make demo`` runs, and
``judged.yaml``) are judged through ``checkweigh run`` against checkweigh.testing's fake
provider on 127.0.0.1, on the OpenAI and the Anthropic wire, with the fake's prompt cache on
and off (``--no-cache``: every call goes to the provider). A third suite is the demo with a
house tone guide added to its judge check's rubric, so its shared prefix passes the 1,024-token
caching minimum. Costs are at list prices given in full to ``--judge-prices`` (printed below).
Token counts are the fake's: one per 4 characters for prompts of 1,024 tokens or more; a
shorter prompt is counted as the fake's fixed 120 (OpenAI) or 150 (Anthropic) input tokens.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from checkweigh.testing import Reply, fake_llm_server, schema_name

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "scheduling"
PRICES = {
    # USD per million tokens: input, output, cached input, cache write (list prices)
    "openai": ("openai:gpt-4.1-mini", "0.4,1.6,0.1,0.4"),
    "anthropic": ("anthropic:claude-sonnet-4-5", "3,15,0.3,3.75"),
}
TONE_GUIDE = " ".join(
    [
        "Our replies are written for busy colleagues: plain words, no jargon, no exclamation",
        "marks, no capitals for emphasis. A reply states what happened first, then what the",
        "user can do next. It never blames the user for a conflict in the calendar and never",
        "hides a failure behind a cheerful tone. Apologise once at most, and only for our own",
        "mistake. Names are written as the user wrote them. Times are given in 24-hour form",
        "with the day. A refusal says why in one sentence and offers the nearest alternative.",
    ]
    * 10
)


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """A valid answer to any of the demo's judge calls, read from the prompt it was sent."""
    text = json.dumps(body.get("messages"))
    name = schema_name(body)
    if name == "scores":
        metrics = re.findall(r"\\n- (\w+):", text)
        return {"scores": [{"metric": m, "score": 4, "reason": "fine"} for m in metrics]}
    if name == "checklist":
        count = len(set(re.findall(r"\\n(\d+)\. ", text)))
        rows = [{"index": i, "verdict": "yes", "reason": "fine"} for i in range(1, count + 1)]
        return {"answers": rows}
    return {"verdict": "yes", "reason": "plain and polite"}


def _respond(wire: str) -> Any:
    def respond(body: dict[str, Any]) -> Reply:
        answer = _answer(body)
        return Reply(tool_input=answer) if wire == "anthropic" else Reply(json.dumps(answer))

    return respond


def _with_tone_guide(folder: Path) -> Path:
    """A copy of the demo suite whose judge check's rubric carries the tone guide."""
    text = (DEMO / "suite.yaml").read_text()
    marker = "      fine. Judge only the tone, not whether the booking is right.\n"
    assert marker in text, "the demo suite's tone rubric changed: update this benchmark"
    text = text.replace(marker, marker.rstrip("\n") + " " + TONE_GUIDE + "\n", 1)
    text = text.replace("cases: scenarios.yaml", f"cases: {DEMO / 'scenarios.yaml'}")
    suite = folder / "suite.yaml"
    suite.write_text(text)
    return suite


def run(suite: Path, wire: str, cache: bool, work: Path) -> dict[str, Any]:
    """One judged run of ``suite``; the run's judge stats."""
    judge, prices = PRICES[wire]
    out = work / f"{suite.stem}-{wire}-{cache}.json"
    with fake_llm_server([], wire=wire, respond=_respond(wire), prompt_cache=cache) as server:
        env = {
            **os.environ,
            "OPENAI_API_KEY": "bench-not-a-key",
            "ANTHROPIC_API_KEY": "bench-not-a-key",
            "OPENAI_BASE_URL": server.base_url,
            "ANTHROPIC_BASE_URL": server.base_url,
            "PYTHONPATH": os.pathsep.join([str(DEMO), str(ROOT / "src")]),
        }
        command = [
            *(sys.executable, "-m", "checkweigh", "run", str(suite)),
            *("--db", f"sqlite:///{work / 'runs.db'}", "-q", "--no-cache"),
            *("--judge", judge, "--judge-prices", prices, "--json", str(out)),
        ]
        done = subprocess.run(command, env=env, cwd=DEMO, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"run failed ({done.returncode}): {done.stdout}{done.stderr}")
    stats: dict[str, Any] = json.loads(out.read_text())["summary"]["judge"]
    return stats


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        suites = {
            "demo (suite.yaml)": DEMO / "suite.yaml",
            "demo judged.yaml": DEMO / "judged.yaml",
            "demo + tone guide": _with_tone_guide(work),
        }
        for wire, (judge, prices) in PRICES.items():
            print(f"\n{wire} wire, {judge} at list prices $/M in,out,cached,write = {prices}")
            print(
                f"{'suite':<20} {'cache':<5} {'calls':>5} {'tokens in':>10} {'cached':>9}"
                f" {'written':>8} {'hit rate':>8} {'cost $':>9} {'saved $':>9}"
            )
            for label, suite in suites.items():
                for cache in (True, False):
                    s = run(suite, wire, cache, work)
                    rate = s["prompt_cache_hit_rate"] or 0.0
                    print(
                        f"{label:<20} {'on' if cache else 'off':<5} {s['calls']:>5}"
                        f" {s['input_tokens']:>10,} {s['cached_input_tokens']:>9,}"
                        f" {s['cache_write_tokens']:>8,} {rate:>8.1%} {s['cost_usd']:>9.4f}"
                        f" {s['prompt_cache_saved_usd']:>9.4f}"
                    )


if __name__ == "__main__":
    main()
