"""Serve a scripted LLM on 127.0.0.1 from its own process, until stdin closes.

``python -m checkweigh.testing [--wire openai|anthropic] [--latency S] [--answer TEXT]
[--answer-for NAME=TEXT ...] [--structured all|llama|none] [--keep-alive] [--rpm N] [--tpm N]
[--no-prompt-cache] [--stats]`` prints
the base URL on its first line; every request gets ``--answer`` (or, when it asks for the answer
schema NAME, that ``--answer-for``) after ``--latency``; ``--structured`` picks the
``response_format`` types the server accepts (``llama``: like llama-cpp-python's server).
With ``--stats``, a last line gives what the server saw as JSON: requests, the peak of requests
in flight, the span from the first request to the last answer and the requests answered 429.
``--rpm`` and ``--tpm`` limit the requests and tokens per minute as the providers do (429s with
``retry-after`` and the rate-limit headers on every answer).
"""

from __future__ import annotations

import argparse
import json
import sys

from ._fake_llm import Reply, by_schema, fake_llm_server


def _answer_for(text: str) -> tuple[str, str]:
    name, sep, answer = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=TEXT, got {text!r}")
    return name, answer


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def main() -> None:
    """Run the server until stdin is closed."""
    p = argparse.ArgumentParser(prog="python -m checkweigh.testing", description=__doc__)
    p.add_argument("--wire", choices=["openai", "anthropic"], default="openai")
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--answer", default='{"verdict": "yes", "reason": "scripted"}')
    p.add_argument(
        "--answer-for",
        type=_answer_for,
        action="append",
        default=[],
        metavar="NAME=TEXT",
        help="the answer to requests for the answer schema NAME",
    )
    p.add_argument("--keep-alive", action="store_true", help="HTTP/1.1 keep-alive")
    p.add_argument("--structured", choices=["all", "llama", "none"], default="all")
    p.add_argument("--rpm", type=_positive, help="requests per minute (429 past it)")
    p.add_argument("--tpm", type=_positive, help="tokens per minute (429 past it)")
    p.add_argument("--stats", action="store_true", help="print what the server saw at the end")
    p.add_argument("--no-prompt-cache", action="store_true", help="report no prompt-cached tokens")
    a = p.parse_args()
    reply = Reply(a.answer, delay_s=a.latency)
    answers = {name: Reply(text, delay_s=a.latency) for name, text in a.answer_for}
    with fake_llm_server(
        [],
        wire=a.wire,
        default=reply,
        keep_alive=a.keep_alive,
        structured=a.structured,
        respond=by_schema(answers) if answers else None,
        prompt_cache=not a.no_prompt_cache,
        rpm=a.rpm,
        tpm=a.tpm,
    ) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # returns when the parent closes our stdin
        if a.stats:
            print(json.dumps(server.stats()), flush=True)


if __name__ == "__main__":
    main()
