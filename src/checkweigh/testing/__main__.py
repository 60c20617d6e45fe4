"""Serve a scripted LLM on 127.0.0.1 from its own process, until stdin closes.

``python -m checkweigh.testing [--wire openai|anthropic] [--latency S] [--answer TEXT]
[--structured all|llama|none]`` prints the base URL on its first line; every request gets
``--answer`` after ``--latency``; ``--structured`` picks the ``response_format`` types the
server accepts (``llama``: like llama-cpp-python's server).
"""

from __future__ import annotations

import argparse
import sys

from ._fake_llm import Reply, fake_llm_server


def main() -> None:
    """Run the server until stdin is closed."""
    p = argparse.ArgumentParser(prog="python -m checkweigh.testing", description=__doc__)
    p.add_argument("--wire", choices=["openai", "anthropic"], default="openai")
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--answer", default='{"verdict": "yes", "reason": "scripted"}')
    p.add_argument("--keep-alive", action="store_true", help="HTTP/1.1 keep-alive")
    p.add_argument("--structured", choices=["all", "llama", "none"], default="all")
    a = p.parse_args()
    reply = Reply(a.answer, delay_s=a.latency)
    with fake_llm_server(
        [], wire=a.wire, default=reply, keep_alive=a.keep_alive, structured=a.structured
    ) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # returns when the parent closes our stdin


if __name__ == "__main__":
    main()
