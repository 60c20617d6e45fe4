# Every target bootstraps .venv itself; `make help` lists them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo demo-agents demo-http demo-command demo-conversations test lint types docs docs-build pytest bench bench-ray llama clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-20s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP) ## Run the scheduling example suite end to end
	$(BIN)/checkweigh run examples/scheduling/suite.yaml --db sqlite:///.checkweigh/demo.db

demo-agents: demo-http demo-command demo-conversations ## Score the agent examples: HTTP, command, multi-turn

demo-http: $(STAMP) ## An HTTP agent started on 127.0.0.1, scored through target kind http
	$(BIN)/python examples/http_agent/run.py --db sqlite:///.checkweigh/demo.db

demo-command: $(STAMP) ## A Node agent scored through target kind command
	$(BIN)/checkweigh run examples/command_agent/suite.yaml --db sqlite:///.checkweigh/demo.db

demo-conversations: $(STAMP) ## Multi-turn scheduling conversations with scripted users
	$(BIN)/checkweigh run examples/scheduling/conversations.yaml --db sqlite:///.checkweigh/demo.db

test: lint types docs-build $(STAMP) ## Lint, type-check, build the docs strictly and run the tests (SQLite, a throwaway PostgreSQL, a local llama server)
	scripts/with_postgres.sh scripts/with_llama.sh $(BIN)/pytest -q

lint: $(STAMP) ## ruff lint + format check, and the packages' layers and boundaries (import-linter)
	$(BIN)/ruff check src tests examples benchmarks docs/hooks
	$(BIN)/ruff format --check src tests examples benchmarks docs/hooks
	$(BIN)/lint-imports

types: $(STAMP) ## mypy strict on src/
	$(BIN)/mypy

docs: $(STAMP) ## Serve the documentation site on http://127.0.0.1:8000, rebuilt as pages change
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

docs-build: $(STAMP) ## Build the documentation site into site/ (strict: a broken link or reference fails)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

pytest: $(STAMP) ## The test suite
	$(BIN)/pytest -q

bench: $(STAMP) ## Benchmarks: print throughput and memory figures
	$(BIN)/python benchmarks/bench_scoring.py
	$(BIN)/python benchmarks/bench_judges.py
	$(BIN)/python benchmarks/bench_faithfulness.py
	$(BIN)/python benchmarks/bench_prompt_cache.py
	$(BIN)/python benchmarks/bench_judge_cpu.py
	$(BIN)/python benchmarks/bench_import.py
	$(BIN)/python benchmarks/bench_conversations.py
	$(BIN)/python benchmarks/bench_http_target.py
	$(BIN)/python benchmarks/bench_command_target.py
	$(BIN)/python benchmarks/bench_multiturn.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_workers.py
	$(BIN)/python benchmarks/bench_rate_limits.py
	$(BIN)/python benchmarks/bench_batch.py
	$(BIN)/python benchmarks/bench_live.py

bench-ray: $(STAMP) ## Ray executor on a local 1- then 2-node cluster: agent cases/s vs the limit, memory at scale (~3 min)
	$(BIN)/python benchmarks/bench_ray.py

llama: ## Install the local llama.cpp judge server the tests use (built once, cached)
	scripts/setup_llama.sh

clean: ## Remove the virtualenv and local run data
	rm -rf $(VENV) .checkweigh .pytest_cache .mypy_cache .ruff_cache site
