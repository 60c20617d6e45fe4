"""Start the HTTP agent on a free port of 127.0.0.1, score it with ``checkweigh run``, stop it.

    python examples/http_agent/run.py [checkweigh run options, e.g. --db sqlite:///demo.db]

Exits with checkweigh's exit code (0: the gates passed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    """Run the example; the agent is stopped whatever happens."""
    agent = subprocess.Popen(
        [sys.executable, str(HERE / "agent_server.py"), "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        port = agent.stdout.readline().strip()
        if not port.isdigit():
            print("the agent did not start", file=sys.stderr)
            return 2
        env = {**os.environ, "AGENT_PORT": port}
        command = [sys.executable, "-m", "checkweigh", "run", str(HERE / "suite.yaml")]
        return subprocess.call([*command, *sys.argv[1:]], env=env)
    finally:
        agent.terminate()
        agent.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
